"""Pod behaviours by image: what a pod of a given image does on kubesim.

A role under test creates its pods from its own templates, which carry no kubesim
annotation; a test (or ``--image-behaviours FILE``) says instead what pods of an image
do, and the pods get the matching steering annotations at creation (those the pod
already has win)::

    sim.image_behaviours.add("*/gpu-burn:*", log="GPU 0: OK (43210 Gflop/s)", **{"duration-s": "30"})

The annotations are the pods' usual ones (``kubesim.perfscale.io/<name>``: ``log``,
``outcome``, ``exit-code``, ``duration-s``, ``ready``, ``ready-delay-s``, ``run-local``,
``trainer-summary``, ``trainer-steps``; see docs/kubesim.md). The first rule whose glob
matches the image of the pod's first container applies; rules added later come first.
"""

import fnmatch
import threading

PREFIX = "kubesim.perfscale.io/"


class ImageBehaviours:
    def __init__(self, rules=()):
        self._rules = []
        self._lock = threading.Lock()
        for rule in rules:
            rule = dict(rule)
            self.add(rule.pop("image"), **(rule.pop("annotations", None) or rule))

    def add(self, image_glob, **annotations):
        """Pods whose first container's image matches ``image_glob`` get these annotations."""
        with self._lock:
            self._rules.insert(0, (image_glob, {PREFIX + k if "/" not in k else k: str(v)
                                                for k, v in annotations.items()}))

    def clear(self):
        with self._lock:
            self._rules = []

    def annotations_for(self, image):
        with self._lock:
            for pattern, annotations in self._rules:
                if fnmatch.fnmatchcase(image or "", pattern):
                    return dict(annotations)
        return {}

    def hook(self, cluster, resource, old, new):
        """Admission hook: annotate a new pod as its image says."""
        del cluster
        if resource.plural != "pods" or old is not None:
            return
        containers = (new.get("spec") or {}).get("containers") or [{}]
        wanted = self.annotations_for(containers[0].get("image"))
        if wanted:
            current = new["metadata"].setdefault("annotations", {})
            for key, value in wanted.items():
                current.setdefault(key, value)
