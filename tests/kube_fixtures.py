"""kubesim for tests: a context manager and fixture factories usable from any test folder.

    from kube_fixtures import kubesim_cluster

    with kubesim_cluster(profile="vanilla") as sim:      # in-process (threads)
        run(["kubectl", ...], env={"KUBECONFIG": sim.kubeconfig})

    with kubesim_cluster(subprocess=True) as sim:        # `python -m kubesim` child process
        ...                                              # (runs Jobs' commands locally by default)

    with kubesim_cluster(profile="openshift", time_scale=50, addons=["kserve"], run_local_pods=True) as sim:
        ...                                              # settings: kubesim.app.Settings / the flags

``sim`` has ``kubeconfig``, ``url``, ``admin_token``, ``user_tokens`` and, in
process, the whole :class:`kubesim.app.KubeSim` API (``faults``, ``cluster``...).
"""

import contextlib
import os
import signal
import subprocess
import sys
import tempfile

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Settings lists and the repeatable `python -m kubesim` flag of each item
REPEATED_FLAGS = {"addons": "--addon", "catalog_dirs": "--catalog-dir", "user_namespaces": "--user-namespace",
                  "disabled_controllers": "--disable-controller", "disabled_transients": "--no-transient"}
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)


def kubectl_binary():
    """The real kubectl 1.35 (installed into .venv/kube-bin on first use)."""
    from kubesim.clients import install_clients
    return install_clients()


class _ChildSim:
    """A ``python -m kubesim`` child process (what ``make kubesim`` runs)."""

    def __init__(self, args, state_dir):
        self.state_dir = state_dir
        self.process = subprocess.Popen([sys.executable, "-m", "kubesim", "--state-dir", state_dir] + list(args),
                                        cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("export KUBECONFIG="):
            self.process.kill()
            raise RuntimeError("kubesim did not start: %s %s" % (line, self.process.stderr.read()))
        self.kubeconfig = line.strip().split("=", 1)[1]
        import json
        with open(self.kubeconfig, encoding="utf-8") as handle:
            config = json.load(handle)
        self.url = config["clusters"][0]["cluster"]["server"]
        self.admin_token = config["users"][0]["user"]["token"]
        self.user_tokens = {u["name"][len("kubesim-"):-len("-user")]: u["user"]["token"] for u in config["users"][1:]}

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@contextlib.contextmanager
def kubesim_cluster(subprocess=False, **settings):
    """A running kubesim on a free port, stopped at exit."""
    if subprocess:
        args = []
        for key, value in settings.items():
            if key == "state_dir":
                continue
            flag = "--" + key.replace("_", "-")
            if value is True:
                args.append(flag)
            elif value is False:
                args.append("--no-" + flag[2:])  # boolean flags (--run-local-pods / --no-run-local-pods)
            elif isinstance(value, (list, tuple)):
                for item in value:  # repeatable flags (addons -> --addon X --addon Y)
                    args += [REPEATED_FLAGS.get(key, flag), str(item)]
            elif value is not None:
                args += [flag, str(value)]
        with tempfile.TemporaryDirectory(prefix="kubesim-test-") as tmp:
            sim = _ChildSim(args, settings.get("state_dir") or tmp)
            try:
                yield sim
            finally:
                sim.stop()
        return
    from kubesim.app import KubeSim
    sim = KubeSim(**settings)
    sim.start()
    try:
        yield sim
    finally:
        sim.stop()


@contextlib.contextmanager
def recorded_states(sim, key, name, summary):
    """Every distinct ``summary(obj)`` the object ``name`` of storage ``key`` ((group, plural)) went
    through while the block ran, in order (an in-process kubesim's store listener: no state is missed,
    however short)."""
    seen = []

    def listen(event_type, event_key, obj, old):
        if event_key == key and obj["metadata"]["name"] == name and event_type != "DELETED":
            value = summary(obj)
            if value is not None and (not seen or seen[-1] != value):
                seen.append(value)
    sim.cluster.store.add_listener(listen)
    try:
        yield seen
    finally:
        sim.cluster.store.remove_listener(listen)


def true_conditions(obj):
    """``"Type=Reason"`` of the object's True conditions, ``;``-joined (a recorded_states summary)."""
    conditions = (obj.get("status") or {}).get("conditions") or []
    return ";".join("%s=%s" % (c.get("type"), c.get("reason")) for c in conditions if c.get("status") == "True") or None
