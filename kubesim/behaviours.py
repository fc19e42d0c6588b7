"""Pod behaviours by image: what a pod of a given image does on kubesim.

A role under test creates its pods from its own templates, which carry no kubesim
annotation; a test (or ``--image-behaviours FILE``) says instead what pods of an image
do, and the pods get the matching steering annotations at creation (those the pod
already has win)::

    sim.image_behaviours.add("*/gpu-burn:*", log="GPU 0: OK (43210 Gflop/s)", **{"duration-s": "30"})

The annotations are the pods' usual ones (``kubesim.perfscale.io/<name>``: ``log``,
``outcome``, ``exit-code``, ``duration-s``, ``ready``, ``ready-delay-s``, ``run-local``,
``trainer-summary``, ``trainer-steps``, ``crash-count``, ``start-delay-s``; see docs/kubesim.md). The first
rule whose glob matches the image of the pod's first container applies; rules added later come first.

A rule may name one of the built-in ``BEHAVIOURS`` (its annotations, which the rule's own override)::

    sim.image_behaviours.add("quay.io/modh/vllm:*", behaviour="crash-once")
    [{"image": "quay.io/modh/vllm:*", "behaviour": "slow-storage", "annotations": {"start-delay-s": "60"}}]

- ``crash-once``: the container exits with code 1 (its log: a CUDA error) 5 simulated seconds after it
  starts, before it is ready (8 s), once; the kubelet restarts it after its back-off and the restart
  runs - what KServe reports ``BlockedByFailedLoad`` for, then
  ``Loaded`` (kserve/kserve inference_service_status.go, PropagateModelStatus);
- ``crash-loop``: the same crash for ever (CrashLoopBackOff, the back-off doubling to 5 minutes);
- ``slow-storage``: the pod stays ``ContainerCreating`` for 120 simulated seconds, as while the kubelet
  mounts a slow volume (a model's PVC), then runs.
"""

import fnmatch
import threading

PREFIX = "kubesim.perfscale.io/"
CRASH_LOG = "RuntimeError: CUDA error: an illegal memory access was encountered"
BEHAVIOURS = {
    "crash-once": {"outcome": "CrashLoopBackOff", "crash-count": "1", "exit-code": "1", "duration-s": "5",
                   "ready-delay-s": "8", "log": CRASH_LOG},
    "crash-loop": {"outcome": "CrashLoopBackOff", "exit-code": "1", "duration-s": "5", "log": CRASH_LOG},
    "slow-storage": {"start-delay-s": "120"},
}


def behaviour_annotations(name):
    """The annotations of the built-in behaviour ``name`` (ValueError naming the known ones otherwise)."""
    if name not in BEHAVIOURS:
        raise ValueError("image behaviour %r: unknown; expected one of %s" % (str(name)[:80],
                                                                              ", ".join(sorted(BEHAVIOURS))))
    return dict(BEHAVIOURS[name])


class ImageBehaviours:
    def __init__(self, rules=()):
        self._rules = []
        self._lock = threading.Lock()
        for rule in rules:
            rule = dict(rule)
            behaviour = rule.pop("behaviour", None)
            self.add(rule.pop("image"), behaviour=behaviour, **(rule.pop("annotations", None) or rule))

    def add(self, image_glob, behaviour=None, **annotations):
        """Pods whose first container's image matches ``image_glob`` get these annotations (over those of
        the built-in ``behaviour``, when one is named)."""
        wanted = behaviour_annotations(behaviour) if behaviour is not None else {}
        wanted.update(annotations)
        with self._lock:
            self._rules.insert(0, (image_glob, {PREFIX + k if "/" not in k else k: str(v)
                                                for k, v in wanted.items()}))

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
