"""Run ansible-playbook of this checkout the way a user does."""

import os
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.dirname(sys.executable)
HERE = os.path.dirname(os.path.abspath(__file__))


def ansible_env(extra=None):
    env = dict(os.environ)
    # each playbook run gets an empty results store of its own (never the user's
    # ~/.local/share/perfscale-topsail, never another test's): a test that wants
    # history names its SQLite file with export.sqlite.path
    env["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="perfscale-test-data-")
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    env["ANSIBLE_CONFIG"] = os.path.join(REPO, "ansible.cfg")
    env["ANSIBLE_ROLES_PATH"] = os.path.join(HERE, "roles")
    env["ANSIBLE_NOCOLOR"] = "1"
    env["ANSIBLE_FORCE_COLOR"] = "0"
    env.pop("ARTIFACT_DIR", None)
    # profiling the suite: tests/profiling/callback/task_times.py and worker_profile.py
    profilers = [name for name, variable in (("task_times", "PERFSCALE_TASK_TIMES"),
                                             ("worker_profile", "PERFSCALE_WORKER_PROFILE")) if env.get(variable)]
    if profilers:
        env["ANSIBLE_CALLBACK_PLUGINS"] = os.path.join(os.path.dirname(HERE), "profiling", "callback")
        env["ANSIBLE_CALLBACKS_ENABLED"] = ",".join(
            ["perfscale.topsail.toolbox_log", "perfscale.topsail.kpi_export"] + profilers)
    env.update(extra or {})
    return env


def run_playbook(playbook, *args, cwd=None, env=None, timeout=600):
    if not os.path.isabs(playbook) and "." not in playbook.split("/")[0] or playbook.startswith("playbooks/"):
        playbook = os.path.join(REPO, playbook)
    command = [os.path.join(BIN, "ansible-playbook"), "-i", os.path.join(REPO, "inventories", "local", "hosts.yml"),
               playbook] + list(args)
    completed = subprocess.run(command, cwd=cwd or REPO, env=ansible_env(env), capture_output=True, text=True,
                               timeout=timeout, check=False)
    completed.output = completed.stdout + completed.stderr
    # the YAML result format wraps long messages: match them on normalized whitespace
    completed.flat = " ".join(completed.output.split())
    return completed


def run_toolbox(*args, cwd=None, env=None, timeout=600):
    """``run_toolbox.py ARGS`` of this checkout as a user runs it: from another directory (``cwd``, default
    the system's temporary directory) and without ANSIBLE_CONFIG (the script finds the checkout's)."""
    environ = ansible_env(env)
    if "ANSIBLE_CONFIG" not in (env or {}):
        environ.pop("ANSIBLE_CONFIG")
    completed = subprocess.run([sys.executable, os.path.join(REPO, "run_toolbox.py")] + list(args),
                               cwd=cwd or tempfile.gettempdir(), env=environ, capture_output=True, text=True,
                               timeout=timeout, check=False)
    completed.output = completed.stdout + completed.stderr
    completed.flat = " ".join(completed.output.split())
    return completed


def tree(root):
    """Files of a tree, without the run lock (its keeper removes it just after the run)."""
    found = []
    for directory, _dirs, files in os.walk(root):
        for name in files:
            if name == ".perfscale-run.lock":
                continue
            found.append(os.path.relpath(os.path.join(directory, name), root))
    return sorted(found)


def grep_tree(root, needle):
    """Files of a tree holding ``needle`` (the run lock, which its keeper removes just after the run,
    is left out)."""
    hits = []
    for path in tree(root):
        with open(os.path.join(root, path), "rb") as handle:
            if needle.encode() in handle.read():
                hits.append(os.path.join(root, path))
    return hits


# a busy loop at the lowest priority the kernel offers an unprivileged process (CpuBurner): in a
# session of its own (Popen's start_new_session), whose autogroup it puts at nice 19 (where the
# kernel has autogroups), SCHED_IDLE and nice 19 inside it; %d: how long it may run, in seconds
BURNER_PROGRAM = """import os, time
try:
    with open("/proc/self/autogroup", "w") as group:
        group.write("19")
except OSError:
    pass  # a kernel without autogroup scheduling: nice and SCHED_IDLE below are enough there
try:
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
except (AttributeError, OSError):
    pass  # no SCHED_IDLE here (not Linux) or a sandbox refusing it: nice 19 still applies
os.nice(19)
end = time.time() + %d
while time.time() < end:
    pass
"""


class CpuBurner:
    """``with CpuBurner(per_cpu=3):`` a loaded machine, as a shared CI runner is: ``per_cpu``
    busy processes per CPU at the lowest priority (the 1-minute load average counts them; they
    take little CPU from the test), bounded in time, stopped on exit. On entry it waits (at most
    ``settle_s``) until the load average per CPU is above ``load_per_cpu``.

    The lowest priority takes more than ``nice 19``: on a kernel with autogroup scheduling (most
    distributions' default), nice only ranks processes inside their session's group, and every
    Ansible task worker starts a session of its own (``os.setsid`` in ansible-core's
    ``WorkerProcess._detach``). Burners at nice 19 in the tests' session took that session's whole
    share - six of them held 1.5 of 2 cores for the ~200 s of this test in ``make test``'s integration
    step (224 of its 845 CPU-s), slowing every test beside them. Each burner is therefore a session of
    its own whose group runs at nice 19, and SCHED_IDLE inside it (BURNER_PROGRAM)."""

    def __init__(self, per_cpu=3, limit_s=900, load_per_cpu=0.9, settle_s=90, program=BURNER_PROGRAM):
        self.count = per_cpu * (os.cpu_count() or 1)
        self.limit_s, self.load_per_cpu, self.settle_s = limit_s, load_per_cpu, settle_s
        self.program = program  # another burner program (benchmarks/cpu_burner_share.py compares two)
        self.processes = []

    def __enter__(self):
        import time

        program = self.program % self.limit_s
        self.processes = [subprocess.Popen([sys.executable, "-c", program], start_new_session=True)
                          for _index in range(self.count)]
        deadline = time.time() + self.settle_s
        while os.getloadavg()[0] / (os.cpu_count() or 1) <= self.load_per_cpu and time.time() < deadline:
            time.sleep(1)
        return self

    def __exit__(self, *exc_info):
        for process in self.processes:
            process.kill()
        for process in self.processes:
            process.wait()
        return False
