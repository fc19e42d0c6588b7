"""``KubeSim``: the whole simulated cluster (Python API) and its kubeconfig.

    sim = KubeSim(profile="vanilla", port=0, state_dir=None, time_scale=1.0)
    sim.start()            # background threads; sim.kubeconfig is written
    ...                    # kubectl / kubernetes client / ansible against it
    sim.stop()             # snapshot to state_dir (when set), kill local pods

Tokens: ``sim.admin_token`` (everything) and one token per user namespace
(``sim.user_tokens[ns]``: only that namespace, 403 elsewhere). The kubeconfig
has a context per user: ``kubesim-admin`` (current) and ``kubesim-<ns>-user``.
"""

import json
import os
import secrets
import shutil
import tempfile
import threading

from kubesim import addons, certs
from kubesim.behaviours import ImageBehaviours
from kubesim.clock import Clock
from kubesim.cluster import Cluster
from kubesim.controllers import Manager
from kubesim.controllers.registry import default_registry
from kubesim.defaults import apply_crd_defaults, apply_defaults
from kubesim.faults import Faults
from kubesim.localexec import LocalProcessRunner
from kubesim.openapi import OpenAPI
from kubesim.podlogs import PodLogs
from kubesim.profiles import bootstrap
from kubesim.server import Api, Server, User

SNAPSHOT = "snapshot.json"
VERSION = {"major": "1", "minor": "35", "emulationMajor": "1", "emulationMinor": "35",
           "minCompatibilityMajor": "1", "minCompatibilityMinor": "34",
           "gitVersion": "v1.35.0-kubesim", "gitCommit": "0000000000000000000000000000000000000000",
           "gitTreeState": "clean", "buildDate": "2025-12-17T00:00:00Z", "goVersion": "go1.25.0",
           "compiler": "gc", "platform": "linux/amd64"}


class Settings:
    """Options of a simulated cluster (the command line flags)."""

    def __init__(self, profile="vanilla", port=0, state_dir=None, time_scale=1.0, user_namespaces=("team-a",),
                 run_local_pods=False, run_local_scope="jobs", max_local_pods=None, pod_start_delay=0.5,
                 controllers=None, disabled_controllers=(), registry=None, addons=(), catalog_dirs=(),
                 inference_url=None, image_behaviours=(), disabled_transients=()):
        self.profile = profile
        self.port = port
        self.state_dir = state_dir
        self.time_scale = time_scale
        self.user_namespaces = tuple(user_namespaces)
        # in process (tests) pods are simulated unless asked; `python -m kubesim` runs Jobs' commands locally
        self.run_local_pods = run_local_pods
        self.run_local_scope = run_local_scope          # "jobs": pods of batch/v1 Jobs; "all": every pod
        self.max_local_pods = max_local_pods or max(4, 2 * (os.cpu_count() or 2))
        self.pod_start_delay = pod_start_delay
        self.controllers = controllers
        self.disabled_controllers = tuple(disabled_controllers)
        self.registry = registry
        self.addons = tuple(addons)                    # extra API bundles (kubesim.addons), on top of the profile's
        self.catalog_dirs = tuple(catalog_dirs)        # more OLM catalog fixtures (kubesim/catalogs format)
        self.inference_url = inference_url             # default status.url of InferenceServices (tests' local server)
        self.image_behaviours = tuple(image_behaviours)  # [{image: glob, annotations: {...}}] (kubesim.behaviours)
        # the transient states a real rollout shows are simulated unless named here (Controller.transients)
        self.disabled_transients = frozenset(disabled_transients)


def _namespace_label_hook(cluster, resource, old, new):
    # the NamespaceDefaultLabelName admission: every namespace carries kubernetes.io/metadata.name
    if resource.plural == "namespaces":
        new["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = new["metadata"]["name"]


class KubeSim:
    def __init__(self, settings=None, **kwargs):
        self.settings = settings or Settings(**kwargs)
        s = self.settings
        self._own_dir = s.state_dir is None
        self.directory = os.path.abspath(s.state_dir) if s.state_dir else tempfile.mkdtemp(prefix="kubesim-")
        os.makedirs(self.directory, exist_ok=True)
        self.clock = Clock(s.time_scale)
        self.cluster = Cluster(self.clock)
        self.cluster.settings = s
        self.cluster.hooks.append(_namespace_label_hook)
        self.cluster.defaulters.append(apply_defaults)
        self.cluster.defaulters.append(apply_crd_defaults)
        self.image_behaviours = ImageBehaviours(s.image_behaviours)
        # controllers that run a program inside pods they create (KubeRay's Ray jobs) read them too
        self.cluster.image_behaviours = self.image_behaviours
        self.cluster.hooks.append(self.image_behaviours.hook)
        self.faults = Faults()
        self.cluster.faults = self.faults
        self.logs = PodLogs(self.clock)
        self.cluster.logs = self.logs
        self.runner = LocalProcessRunner(os.path.join(self.directory, "pods"), s.max_local_pods)
        self.cluster.runner = self.runner
        self.openapi = OpenAPI(self.cluster)
        self.stopping = False
        self.server = None
        self.manager = None
        self._thread = None
        self._tokens = self._load_tokens()
        self.admin_token = self._tokens["admin"]
        self.user_tokens = {ns: self._tokens["users"][ns] for ns in s.user_namespaces}
        self.users = {self.admin_token: User("kubesim-admin", self.admin_token)}
        for ns, token in self.user_tokens.items():
            self.users[token] = User("kubesim-%s-user" % ns, token, namespaces=[ns])
        self.kubeconfig = os.path.join(self.directory, "kubeconfig")
        self.port = None
        self.addons = []

    # -- state -----------------------------------------------------------------------------
    def _load_tokens(self):
        path = os.path.join(self.directory, "tokens.json")
        data = {"admin": None, "users": {}}
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        data["admin"] = data.get("admin") or "kubesim-admin-" + secrets.token_hex(16)
        for ns in self.settings.user_namespaces:
            data["users"].setdefault(ns, "kubesim-%s-" % ns + secrets.token_hex(16))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        return data

    def snapshot(self):
        """Write the state to ``<state dir>/snapshot.json``; returns its path."""
        path = os.path.join(self.directory, SNAPSHOT)
        self.cluster.store.snapshot(path, extra={"port": self.port, "profile": self.settings.profile,
                                                 "addons": list(self.addons)})
        return path

    def install_addon(self, name):
        """Install an addon (``olm``, ``kserve``, ``kubeflow``, ``gpu-ready``...) into the running cluster."""
        addons.install(self, [name], done=self.addons)
        return self

    def _restore(self):
        path = os.path.join(self.directory, SNAPSHOT)
        if not os.path.exists(path):
            return {}
        extra = self.cluster.store.load(path)
        crds, _ = self.cluster.store.list(("apiextensions.k8s.io", "customresourcedefinitions"))
        for crd in crds:
            self.cluster.registry.add_crd(crd)
            self.cluster.validator.register_crd(crd)
        return extra

    # -- lifecycle -------------------------------------------------------------------------
    def check_settings(self):
        """Refuse settings that name what kubesim does not have (ValueError, one line)."""
        registry = self.settings.registry or default_registry()
        known = {name for cls in registry.classes() for name in cls.transients}
        for name in sorted(self.settings.disabled_transients):
            if name not in known:
                raise ValueError("--no-transient %s: no such transient state (known: %s)" % (name, ", ".join(sorted(known))))
        return self

    def start(self):
        s = self.settings
        self.check_settings()
        extra = self._restore()
        port = s.port or extra.get("port") or 0
        ca, cert, key = certs.ensure_certificates(os.path.join(self.directory, "pki"))
        self.ca_file = ca
        try:
            self.server = Server(port, Api(self), cert, key)
        except OSError:
            if not port or s.port:
                raise
            self.server = Server(0, Api(self), cert, key)  # the previous port is taken
        self.port = self.server.server_address[1]
        self.manager = Manager(self.cluster, s.registry or default_registry(), s.controllers, s.disabled_controllers)
        # idempotent: a reloaded state keeps its objects; aggregated APIs are served again
        profile_addons = bootstrap(self.cluster, s.profile, s.user_namespaces)
        self.addons = addons.install(self, list(profile_addons) + list(s.addons) + list(extra.get("addons") or ()))
        self.manager.start()  # resyncs: reloaded objects are reconciled again
        self.write_kubeconfig()
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="kubesim-http", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        if self.server is None:
            return
        self.stopping = True
        self.cluster.store.close_watchers()
        self.server.shutdown()
        self.server.close_connections()
        self.server.server_close()
        self.manager.stop()
        if not self._own_dir:
            self.snapshot()
        self.server = None
        if self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)

    def restart(self):
        """Stop and start again with the same state directory and port (state survives)."""
        if self._own_dir:
            raise RuntimeError("restart needs a state directory (state_dir=...)")
        port = self.port
        self.stop()
        settings = self.settings
        settings.port = port
        fresh = KubeSim(settings)
        return fresh.start()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- information -----------------------------------------------------------------------
    @property
    def url(self):
        return "https://127.0.0.1:%d" % self.port

    def version_info(self):
        return dict(VERSION)

    def status(self):
        return {"resourceVersion": self.cluster.store.resource_version, "objects": self.cluster.store.count(),
                "profile": self.settings.profile, "timeScale": self.clock.scale, "port": self.port,
                "controllers": [c.name for c in self.manager.controllers]}

    def write_kubeconfig(self, path=None):
        path = path or self.kubeconfig
        with open(self.ca_file, "rb") as handle:
            import base64
            ca_data = base64.b64encode(handle.read()).decode()
        users = [{"name": "kubesim-admin", "user": {"token": self.admin_token}}]
        contexts = [{"name": "kubesim-admin", "context": {"cluster": "kubesim", "user": "kubesim-admin",
                                                          "namespace": "default"}}]
        for ns, token in self.user_tokens.items():
            users.append({"name": "kubesim-%s-user" % ns, "user": {"token": token}})
            contexts.append({"name": "kubesim-%s-user" % ns, "context": {"cluster": "kubesim", "user": "kubesim-%s-user" % ns,
                                                                         "namespace": ns}})
        config = {"apiVersion": "v1", "kind": "Config", "preferences": {},
                  "clusters": [{"name": "kubesim", "cluster": {"server": self.url, "certificate-authority-data": ca_data}}],
                  "users": users, "contexts": contexts, "current-context": "kubesim-admin"}
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(config, handle, indent=1)  # JSON is YAML: every client reads it
        return path

    def wait_idle(self, timeout=10.0):
        """Wait until the controllers have nothing due (tests)."""
        import time
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.manager.idle():
                return True
            time.sleep(0.02)
        return False

