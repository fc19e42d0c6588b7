# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory_hosts executor: the benchmark matrix on the hosts of the inventory group ``benchmark_hosts``.

Like the tekton executor it runs no point itself (a ``WholeMatrixExecutor``): the engine that runs
the matrix is Ansible's play over the group, one ``matrix_host_run`` task per host. The controller
plans and keeps the tree; each host only runs commands:

1. ``plan_host`` / ``render`` (controller, the action plugin ``matrix_host_run``): the points of
   ``tests.benchmark``, planned with the placeholders ``@python@`` (the host's interpreter) and
   ``@harness_dir@`` (where the harness's own files land on the host), under ``<run>/hosts/<host>/``
   where the host's matrix directory is prepared (or resumed) as the local executor's would be.
   What the host gets is a *payload*: the points still to run, the harness's files (the built-in
   indicators' script: standard library and numpy or torch only) and the run policy. Nothing of
   pandas, plotly or pydantic.
2. ``run_on_host`` / ``run_payload`` (the host, in the module ``matrix_host_run``): writes the
   harness's files, runs the points with the local executor and the same ``MatrixRunner``
   (parallelism, timeout, stop_on_error, the harness contract), then packs the point directories
   into one ``tar.gz``.
3. ``unpack`` / ``finish_host`` (controller): the archive fetched back is checked (only regular files
   inside the point directories of the payload) and unpacked into the host's matrix directory, an
   earlier attempt of a point moved aside first; the host's ``progress.json`` is written.

A ``settings.yaml`` in ``hosts/<host>/`` gives every point of the host the setting
``benchmark_host``, and the host's environment capture beside its matrix is the one
post-processing finds for its points: KPIs carry the host's name and fingerprint (CPU, memory, GPUs).

Selection (``select``): ``tests.benchmark.executor: inventory_hosts`` needs a non-empty group;
the default executor (``local``) with a non-empty group selects this one too (the group is how a
team says "benchmark these machines"); another executor (kubernetes, tekton) with a non-empty
group is refused in one line: both say where the points run, and neither is silently dropped.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
import time

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as matrix_lib
from ansible_collections.perfscale.topsail.plugins.module_utils import safe_paths
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ExecutorError, MatrixError
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import base
from ansible_collections.perfscale.topsail.plugins.module_utils.executors.local import LocalExecutor

NAME = "inventory_hosts"
# the executor a configuration gets without saying (benchmark/section.py's default): with hosts in the
# group, it means "run on them"
DEFAULT_EXECUTOR = "local"
GROUP = "benchmark_hosts"
HOSTS_DIR = "hosts"
HOST_SETTING = "benchmark_host"
PYTHON_TOKEN = "@python@"
HARNESS_DIR_TOKEN = "@harness_dir@"
HARNESS_DIR = "harness"
POINTS_DIR = "points"
ARCHIVE = "points.tar.gz"
PAYLOAD_FORMAT = 1

# the most members a host's archive may hold (a point writes a few dozen files)
MAX_ARCHIVE_MEMBERS = 200000
# what the controller keeps in a point directory when its files come back
KEPT_NAMES = (artifacts.SETTINGS_FILE, matrix_lib.PREVIOUS_DIR)


def group_hosts(groups):
    """The hosts of the group ``benchmark_hosts`` in the inventory's ``groups`` (a list, maybe empty)."""
    hosts = (groups or {}).get(GROUP) if hasattr(groups or {}, "get") else None
    return [str(host) for host in hosts or ()]


def _conflict(configured, hosts=None):
    """The one line for another executor than local/inventory_hosts with hosts in the group."""
    group = "the group"
    if hosts:
        group += " (%d host(s): %s)" % (len(hosts), ", ".join(hosts[:5]) + (", ..." if len(hosts) > 5 else ""))
    return ("tests.benchmark.executor %s with the inventory group %s: expected local or %s (each host runs its "
            "points as subprocesses); remove %s to use %s" % (configured, GROUP, NAME, group, configured))


def select(configured, hosts):
    """The executor that runs the matrix, from ``tests.benchmark.executor`` (``configured``) and the
    hosts of the group ``benchmark_hosts`` (``hosts``):

    - ``inventory_hosts``: this executor; the group must have hosts (else one ExecutorError line);
    - ``local`` (the default) and hosts in the group: this executor (as before it was one);
    - another executor and hosts in the group: one ExecutorError line (the group says the hosts
      run the points, the executor says they run elsewhere: neither wins silently);
    - otherwise the configured one.
    """
    hosts = [str(host) for host in hosts or ()]
    if configured == NAME:
        if not hosts:
            raise ExecutorError("tests.benchmark.executor %s: the inventory group %s is empty or missing (list the "
                                "hosts that run the matrix in it, or set tests.benchmark.executor to local)"
                                % (NAME, GROUP))
        return NAME
    if not hosts:
        return configured
    if configured == DEFAULT_EXECUTOR:
        return NAME
    raise ExecutorError(_conflict(configured, hosts))


def _substitute(text, python, harness_dir):
    return text.replace(PYTHON_TOKEN, python).replace(HARNESS_DIR_TOKEN, harness_dir)


def _shipped_argv(argv, shipped):
    """argv with each harness file's local path replaced by its place on the host."""
    local_to_host = {path: "%s/%s" % (HARNESS_DIR_TOKEN, name) for name, path in shipped.items()}
    return [local_to_host.get(part, part) for part in argv]


def _check_payload(payload):
    if not isinstance(payload, dict) or payload.get("format") != PAYLOAD_FORMAT:
        raise MatrixError("matrix payload: expected format %d (controller and host run different releases of the "
                          "collection?)" % PAYLOAD_FORMAT)
    for entry in payload.get("points") or ():
        name = entry.get("directory") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or name in (".", "..") or "/" in name:
            raise MatrixError("matrix payload: point directory %r is not a directory name" % (name,))
    for name in payload.get("files") or {}:
        if not name or name in (".", "..") or "/" in name:
            raise MatrixError("matrix payload: harness file %r is not a file name" % (name,))


def _check_members(archive, members, allowed):
    """Refuse, before anything is written, a member that is not a regular file inside one of the
    point directories the host was given (``safe_paths``' rule, plus: below a point directory, and not
    over the files the controller keeps there)."""
    if len(members) > MAX_ARCHIVE_MEMBERS:
        raise MatrixError("%s: %d members, more than the %d a host's points may send back; nothing was unpacked"
                          % (archive, len(members), MAX_ARCHIVE_MEMBERS))
    for member in members:
        parts = member.name.split("/")
        if (not member.isfile() or safe_paths.name_problem(member.name) or len(parts) < 2 or parts[0] not in allowed
                or parts[1] in KEPT_NAMES):
            raise MatrixError("%s: member %r is not a file of a point directory the host was given; "
                              "nothing was unpacked" % (archive, member.name))


class InventoryHostsExecutor(base.WholeMatrixExecutor):
    name = NAME
    description = ("Each host of the inventory group benchmark_hosts runs the matrix (matrix_host_run, local "
                   "subprocesses there); its points come back under <run>/hosts/<host>/")
    group = GROUP
    hosts_dir = HOSTS_DIR
    python_token = PYTHON_TOKEN

    def __init__(self, section=None, harness=None, base_env=None):
        self.section = dict(section or {})
        self.harness = harness
        self.base_env = dict(os.environ if base_env is None else base_env)

    @classmethod
    def from_section(cls, section, base_env=None, connections=None):
        harness = None
        if section and section.get("harness"):
            from ansible_collections.perfscale.topsail.plugins.module_utils import harnesses

            harness = harnesses.get_harness(section["harness"])
        return cls(section, harness, base_env=base_env)

    @classmethod
    def for_plan(cls, plan):
        """The executor for a benchmark plan, once it is checked that it can run on inventory hosts:
        a self-contained harness, and the executor local (the default) or inventory_hosts."""
        section = plan.section
        if not getattr(plan.harness, "runs_on_hosts", False):
            raise MatrixError("tests.benchmark.harness %s cannot run on the inventory group %s (it needs the "
                              "controller); harnesses that can: the ones with self-contained commands "
                              "(perf_indicator)" % (plan.harness.name, GROUP))
        if section["executor"] not in (DEFAULT_EXECUTOR, NAME):
            raise MatrixError(_conflict(section["executor"]))
        return cls(section, plan.harness)

    # -- selection

    select = staticmethod(select)
    group_hosts = staticmethod(group_hosts)

    # -- on the controller: the host's part of the tree and its payload

    @staticmethod
    def host_parent(run_root, host):
        """``<run>/hosts/<host>``: the host's part of the run tree (created with its settings.yaml)."""
        if not host or host in (".", "..") or "/" in host or "\0" in host:
            raise MatrixError("inventory host name %r cannot name a directory of the run" % host)
        parent = os.path.join(run_root, HOSTS_DIR, host)
        os.makedirs(parent, exist_ok=True)
        settings = os.path.join(parent, artifacts.SETTINGS_FILE)
        if not os.path.exists(settings):
            artifacts.write_yaml_atomic(settings, {HOST_SETTING: host})
        return parent

    def plan_host(self, points, run_root, host):
        """Prepare ``host``'s matrix directory on the controller for ``points`` (planned with
        ``python=PYTHON_TOKEN``); returns ``(matrix_dir, resumed, payload)`` where the payload holds
        only the points still to run (``points`` empty: nothing to do)."""
        parent = self.host_parent(run_root, host)
        matrix_dir, resumed = matrix_lib.prepare_matrix_dir(parent, points, name=self.section["name"],
                                                            spec=self.section)
        pending = [point for point in points if matrix_lib.read_exit_code(point.directory) != 0]
        return matrix_dir, resumed, self.render(pending, matrix_dir)

    def render(self, points, matrix_dir):
        """The payload of ``points`` (already in their directories of ``matrix_dir``): plain JSON, what
        the module ``matrix_host_run`` gets. Nothing is written."""
        section = self.section
        shipped = self.harness.host_files()
        files = {}
        for name, path in sorted(shipped.items()):
            with open(path, encoding="utf-8") as handle:
                files[name] = handle.read()
        entries = [{"name": point.name, "index": point.index, "directory": os.path.basename(point.directory),
                    "argv": _shipped_argv(point.command.argv, shipped), "env": point.command.env,
                    "threads": point.command.threads} for point in points]
        return {"format": PAYLOAD_FORMAT, "harness": self.harness.name, "files": files, "points": entries,
                "timeout_s": section["timeout_s"], "parallelism": section["parallelism"],
                "stop_on_error": section["stop_on_error"],
                "section": {"name": section["name"], "harness": section["harness"]}}

    def run_rendered(self, points, matrix_dir, harness, rendered):
        raise ExecutorError("the %s executor runs the matrix on the hosts of the inventory group %s (the play runs "
                            "perfscale.topsail.matrix_host_run on each), not in this process" % (NAME, GROUP))

    # -- on the host

    @classmethod
    def run_on_host(cls, payload, work_dir, python, controller_alive=None):
        """What the module ``matrix_host_run`` does on the host: the payload's points with the local
        executor, under ``python``; the runner's summary with ``archive``."""
        from ansible_collections.perfscale.topsail.plugins.module_utils import harnesses

        _check_payload(payload)  # before the harness is looked up by the payload's name
        harness = harnesses.get_harness(payload.get("harness"))
        return cls.run_payload(payload, work_dir, harness, python, LocalExecutor(), controller_alive=controller_alive)

    @staticmethod
    def run_payload(payload, work_dir, harness, python, executor, controller_alive=None):
        """Run the payload's points in ``work_dir`` (on the host) with ``executor`` (its ``run``, then
        ``close``); returns the runner's summary with ``archive``: the path of the ``tar.gz`` of the
        point directories."""
        from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import base as harness_base

        _check_payload(payload)
        harness_dir = os.path.join(work_dir, HARNESS_DIR)
        points_dir = os.path.join(work_dir, POINTS_DIR)
        os.makedirs(harness_dir, exist_ok=True)
        os.makedirs(points_dir, exist_ok=True)
        for name, text in (payload.get("files") or {}).items():
            artifacts.write_text_atomic(os.path.join(harness_dir, name), text)
        points = []
        for entry in payload["points"]:
            argv = [_substitute(part, python, harness_dir) for part in entry["argv"]]
            env = {key: _substitute(str(value), python, harness_dir) for key, value in (entry.get("env") or {}).items()}
            point = matrix_lib.Point(entry["index"], entry["name"], None,
                                     harness_base.PointCommand(argv, env, entry.get("threads")))
            point.directory = os.path.join(points_dir, entry["directory"])
            os.makedirs(point.directory, exist_ok=True)
            points.append(point)
        started = time.monotonic()
        matrix = matrix_lib.MatrixRun(points_dir, points, harness, payload.get("section"), timeout=payload["timeout_s"],
                                      parallelism=payload["parallelism"], stop_on_error=payload["stop_on_error"],
                                      controller_alive=controller_alive)
        try:
            summary = executor.run(matrix)  # the same protocol as on the controller
        finally:
            executor.close()
        summary["failed_points"] = [dict(item, directory=os.path.basename(item["directory"]))
                                    for item in summary["failed_points"]]
        summary["matrix_dir"] = points_dir
        summary["archive"] = InventoryHostsExecutor.pack(points_dir, [os.path.basename(p.directory) for p in points],
                                                         os.path.join(work_dir, ARCHIVE))
        summary["host_seconds"] = round(time.monotonic() - started, 3)
        return summary

    @staticmethod
    def pack(points_dir, directories, archive):
        """A ``tar.gz`` of the finished point directories (regular files and directories only)."""
        with tarfile.open(archive, "w:gz", compresslevel=6) as tar:
            for name in directories:
                path = os.path.join(points_dir, name)
                if not os.path.exists(os.path.join(path, artifacts.EXIT_CODE_FILE)):
                    continue  # not finished (stopped or abandoned): it runs again on resume
                for root, dirs, files in os.walk(path):
                    dirs.sort()
                    for filename in sorted(files):
                        full = os.path.join(root, filename)
                        if os.path.isfile(full) and not os.path.islink(full):
                            tar.add(full, arcname=os.path.relpath(full, points_dir), recursive=False)
        return archive

    # -- back on the controller: collect the host's archive into the run tree

    @staticmethod
    def unpack(archive, matrix_dir, directories):
        """Unpack a host's archive into its matrix directory; ``directories``: the point directory
        names the payload sent. Every member is checked before anything is written (a regular file
        inside one of those directories, no file where another member needs a directory), then the
        archive is unpacked into a staging directory beside them: only once all of it is out does each
        point's earlier attempt move aside and its new files move in. Returns the point directories
        unpacked."""
        allowed = set(directories)
        staging = None
        try:
            with tarfile.open(archive, "r:gz") as tar:
                members = tar.getmembers()
                _check_members(archive, members, allowed)
                staging = tempfile.mkdtemp(prefix=".unpacking-", dir=matrix_dir)
                try:
                    safe_paths.check_tar_members(staging, members, "member")
                except safe_paths.UnsafeName as exc:
                    raise MatrixError("%s: %s" % (archive, exc)) from None
                tar.extractall(staging, members=members, filter="data")
            finished = sorted({m.name.split("/")[0] for m in members})
            for name in finished:
                # the controller's copy keeps settings.yaml; an earlier attempt's files move aside
                point = os.path.join(matrix_dir, name)
                os.makedirs(point, exist_ok=True)
                matrix_lib.archive_previous_attempt(point)
                for entry in os.listdir(os.path.join(staging, name)):
                    os.replace(os.path.join(staging, name, entry), os.path.join(point, entry))
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise MatrixError("%s: the host's archive of its point directories is unreadable: %s"
                              % (archive, exc)) from None
        finally:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
        return finished

    @staticmethod
    def finish_host(matrix_dir, host, total, pending, summary):
        """The host's result on the controller once its points are back: its failed points (with
        their controller directories) and counts, written to the host's ``progress.json``.
        ``pending``: the payload's points; ``summary``: what the module returned."""
        matrix_dir = os.path.abspath(matrix_dir)
        failed_points = [dict(item, directory=os.path.join(matrix_dir, item["directory"]))
                         for item in summary["failed_points"]]
        counts = dict(total=total, succeeded=summary["succeeded"], failed=summary["failed"],
                      skipped=total - len(pending), not_run=summary["not_run"])
        artifacts.write_json_atomic(os.path.join(matrix_dir, matrix_lib.PROGRESS_FILE), dict(
            summary, matrix_dir=matrix_dir, failed_points=failed_points, host=host, **counts))
        return failed_points, counts

    # -- the verdict over every host

    @staticmethod
    def outcomes(results):
        """``results``: {host: its matrix_host_run result, or None when it has none (the play never
        reached it)}. Returns ``{"hosts", "failed_hosts", "failed_points", "lines"}``: the hosts that could
        not run their matrix (unreachable, a module error) with their one line, every failed point with
        its host, and one line per host for the play's output."""
        failed_hosts, failed_points, lines = [], [], []
        for host in sorted(results):
            result = results[host]
            if not isinstance(result, dict):
                failed_hosts.append({"host": host, "msg": "did not run the matrix (the play never reached it)"})
            elif result.get("unreachable"):
                failed_hosts.append({"host": host,
                                     "msg": "unreachable: %s" % " ".join(str(result.get("msg", "")).split())})
            elif result.get("failed"):
                failed_hosts.append({"host": host, "msg": " ".join(str(result.get("msg", "failed")).split())})
            elif result.get("skipped"):
                lines.append("%s: skipped" % host)
                continue
            else:
                for point in result.get("failed_points") or ():
                    failed_points.append(dict(point, host=host, label="%s:%s" % (host, point.get("name"))))
                lines.append(str(result.get("msg") or "%s: done" % host))
                continue
            lines.append("%s: FAILED: %s" % (host, failed_hosts[-1]["msg"]))
        return {"hosts": sorted(results), "failed_hosts": failed_hosts, "failed_points": failed_points,
                "lines": lines}
