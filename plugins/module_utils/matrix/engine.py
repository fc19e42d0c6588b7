# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Matrix benchmarking: expand settings into points and run every point.

Expansion (``expand_matrix``)
    ``factors`` maps a setting to a value or a list of values; lists expand to
    their cartesian product (in document order). ``exclude`` entries drop the
    combinations they match (an entry matches when every key it names has that
    value). ``include`` entries then work as Tekton's ``matrix.include`` (and
    GitHub Actions'): an entry whose factor values match existing combinations
    adds its other keys to them without overwriting a factor value; an entry
    that matches none is added as a new combination. ``common_settings`` apply
    under every combination.

Planning (``plan_points``)
    The harness (``harnesses/``) validates every point and builds its command,
    before anything runs.

Running (``MatrixRun``, ``MatrixRunner``)
    The executor (``executors/``) gets the matrix run (``executor.run(MatrixRun)``); one
    that runs points has the ``MatrixRunner`` run each of them with it, one that hands the
    whole matrix to another engine finishes the points it brings back with
    ``record_outcome``. Every point has its own
    directory ``NNN__<name>`` inside the matrix directory ``NNN__matbenchmarking``,
    created up front in expansion order, with ``settings.yaml``. Running a point
    writes ``.uuid``, the harness's ``stderr.log`` and ``output.json`` (what it
    printed, once validated; ``stdout.log`` is kept as it is when the output broke
    the contract),
    ``point.json`` (timing, command), ``FAILURE`` when it failed and, last,
    ``exit_code``. Re-running the same matrix into the same artifact directory
    skips points whose ``exit_code`` is 0; earlier attempts of failed points are
    kept in ``_previous/attempt_N/``. Policies: ``sequential``, ``barrier:N``
    (batches of N; the next starts when the whole batch ended) and ``sliding:N``
    (at most N at once). A failed point never blocks the ones after it; with
    ``stop_on_error`` no new point starts after a failure.
"""

from __future__ import annotations

import concurrent.futures
import datetime
import difflib
import hashlib
import itertools
import json
import os
import re
import shutil
import threading
import time
import uuid

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import HarnessOutputError, MatrixError

# the exit code of a point that ran but did not honour the harness's contract (EX_DATAERR); the executors
# (executors/base.py) use it too: the engine stands below them, driving them through their interface
EXIT_BAD_OUTPUT = 65
MATRIX_FILE = "matrix.yaml"
# the most points run at once (each is a thread here, and a process or a pod)
MAX_PARALLEL_POINTS = 1024
PROGRESS_FILE = "progress.json"
POINT_FILE = "point.json"
PREVIOUS_DIR = "_previous"
# written before a point runs (its capacity plan: capacity/requests.py), kept when it runs
PLAN_FILE = "capacity_plan.json"
SETTINGS_ENV = "PERFSCALE_SETTINGS"
POLICIES = ("sequential", "barrier", "sliding")


# --------------------------------------------------------------------------
# expansion


def _as_values(name, value):
    if isinstance(value, (list, tuple)):
        if not value:
            raise MatrixError("matrix factor '%s' has an empty list of values" % name)
        return list(value)
    return [value]


def _check_entry(kind, position, entry, allowed, what):
    if not isinstance(entry, dict) or not entry:
        raise MatrixError("matrix %s #%d: expected a non-empty mapping of settings, got %r" % (kind, position, entry))
    for key in entry:
        if key not in allowed:
            hint = difflib.get_close_matches(str(key), sorted(allowed), n=1)
            raise MatrixError("matrix %s #%d names unknown %s '%s'%s; known: %s" % (
                kind, position, what, key, " (did you mean '%s'?)" % hint[0] if hint else "", ", ".join(sorted(allowed)) or "(none)"))


def expand_matrix(factors, common_settings=None, include=None, exclude=None, known_settings=None):
    """List of settings mappings, one per point, in expansion order.

    ``known_settings`` (optional) are the setting names an ``include`` entry may
    use besides the factors and common settings; anything else is an error.
    """
    factors = dict(factors or {})
    common_settings = dict(common_settings or {})
    for name in factors:
        if not isinstance(name, str) or not name:
            raise MatrixError("matrix factor names must be non-empty strings, got %r" % (name,))
    names = list(factors)
    values = [_as_values(name, factors[name]) for name in names]
    combos = [dict(zip(names, combo)) for combo in itertools.product(*values)] if names else []

    for position, entry in enumerate(exclude or [], 1):
        _check_entry("exclude", position, entry, set(names), "factor")
        combos = [c for c in combos if not all(c.get(k) == v for k, v in entry.items())]

    allowed = set(names) | set(common_settings) | set(known_settings or ())
    # include entries match the original combinations only, never ones added by an earlier include
    originals = [dict(c) for c in combos]
    for position, entry in enumerate(include or [], 1):
        _check_entry("include", position, entry, allowed if known_settings is not None else set(entry), "setting")
        factor_part = {k: v for k, v in entry.items() if k in names}
        extra_part = {k: v for k, v in entry.items() if k not in names}
        matched = False
        for original, combo in zip(originals, combos):
            if all(original[k] == v for k, v in factor_part.items()):
                combo.update(extra_part)
                matched = True
        if not matched:
            combos.append(dict(entry))

    points = []
    for combo in combos:
        settings = dict(combo)
        for key, value in common_settings.items():
            settings.setdefault(key, value)
        points.append(settings)
    return points


def varying_keys(points):
    """Setting names whose values differ between points (in first-seen order)."""
    keys = []
    for settings in points:
        for key in settings:
            if key not in keys:
                keys.append(key)
    missing = object()
    return [k for k in keys if len({json.dumps(p.get(k, missing) if k in p else "<unset>", sort_keys=True, default=str)
                                    for p in points}) > 1]


_FIELD = re.compile(r"{([^{}:!]*)((?:![rsa])?(?::[^{}]*)?)}")


def template_fields(template):
    return [field for field, _spec in _FIELD.findall(template or "")]


def render_template(template, settings):
    """Format ``template``; a field the point does not set is left out with the
    segment around it (between separators ``_ - .``): ``{indicator}_n{size}``
    gives ``conv2d`` for a point without ``size``."""
    missing = "\0"

    def substitute(match):
        field, spec = match.group(1), match.group(2)
        if not field:
            raise MatrixError("name_template %r: positional fields {} are not allowed, name a setting" % template)
        if field not in settings:
            return missing
        try:
            return ("{0%s}" % spec).format(settings[field])
        except (ValueError, TypeError) as exc:
            raise MatrixError("name_template %r: field %s: %s" % (template, field, exc)) from None

    pieces = re.split(r"([_.-])", _FIELD.sub(substitute, template))
    kept = []
    for position in range(0, len(pieces), 2):
        segment = pieces[position]
        if missing in segment or not segment:
            continue
        if kept:
            kept.append(pieces[position - 1])
        kept.append(segment)
    return "".join(kept)


def point_name(settings, keys, template=None):
    """Directory name of a point: from ``template`` or the settings that vary."""
    if template:
        name = render_template(template, settings)
    else:
        parts = ["%s=%s" % (k, settings[k]) for k in keys if k in settings]
        name = "_".join(parts) or "point"
    try:
        return artifacts.sanitize_name(name)
    except artifacts.ArtifactError as exc:
        raise MatrixError("point name from %r: %s" % (template or "the varying settings", exc)) from None


# --------------------------------------------------------------------------
# planning: validation and commands


class Point:
    def __init__(self, index, name, settings, command):
        self.index = index
        self.name = name
        self.settings = settings
        self.command = command
        self.directory = None

    def as_dict(self):
        return {"index": self.index, "name": self.name, "settings": self.settings, "directory": self.directory}


def parse_parallelism(value):
    """('sequential', 1), ('barrier', n) or ('sliding', n) from a string or mapping."""
    if value is None or value == "sequential":
        return "sequential", 1
    policy, count = None, None
    if isinstance(value, dict) and len(value) == 1:
        policy, count = next(iter(value.items()))
    elif isinstance(value, str) and ":" in value:
        policy, _sep, count = value.partition(":")
        policy = policy.strip()
    if policy in ("barrier", "sliding"):
        try:
            count = int(count)
        except (TypeError, ValueError, OverflowError):
            count = None
        if count and 0 < count <= MAX_PARALLEL_POINTS:
            return policy, count
        raise MatrixError("parallelism %r: the number of points at once must be a whole number from 1 to %d"
                          % (value, MAX_PARALLEL_POINTS))
    raise MatrixError("parallelism %r: expected sequential, barrier:N or sliding:N" % (value,))


def plan_points(points_settings, harness, section=None, name_template=None, python=None, config=None):
    """Validate every point with ``harness`` and build its command; errors name the point.

    The section's ``deployment_factors`` (settings that describe the system under test: replicas,
    an image...) stay in the point's settings and name, and are not given to the harness."""
    harness.check_section(section)
    keys = varying_keys(points_settings)
    if name_template:
        unused = [f for f in template_fields(name_template) if f and not any(f in p for p in points_settings)]
        if unused:
            raise MatrixError("name_template %r uses %s, which no point sets" % (name_template, ", ".join(unused)))
    factors = set((section or {}).get("deployment_factors") or ())
    planned, seen = [], {}
    for index, settings in enumerate(points_settings):
        name = point_name(settings, keys, name_template)
        if name in seen:
            raise MatrixError("points #%d and #%d are both named '%s'; make name_template distinguish them"
                              % (seen[name] + 1, index + 1, name))
        seen[name] = index
        harness_settings = {key: value for key, value in settings.items() if key not in factors}
        command = harness.plan_point(name, harness_settings, section, python=python, config=config)
        # every harness finds the point's settings in its environment
        command.env[SETTINGS_ENV] = json.dumps(settings, sort_keys=True, default=str)
        planned.append(Point(index, name, settings, command))
    return planned


def fingerprint(points):
    payload = json.dumps([[p.name, p.settings, p.command.argv[1:] if p.command else None] for p in points],
                         sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


# --------------------------------------------------------------------------
# directories and resume


def _load_yaml(path):
    """A matrix plan (``matrix.yaml``), bounded in size and depth (a ``ValueError`` past them)."""
    import yaml

    with open(path, encoding="utf-8") as handle:
        text = handle.read(bounded_input.MAX_DOCUMENT_BYTES + 1)
    return bounded_input.parse(yaml.safe_load, text, "matrix plan %s" % path)


def prepare_matrix_dir(parent, points, name="matbenchmarking", spec=None):
    """Reuse the matrix directory of the same matrix in ``parent``, or create one.

    Returns (matrix_dir, resumed). Point directories are created (in expansion
    order) with their settings.yaml.
    """
    found = find_matrix_dir(parent, points, name)
    if found is not None:
        candidate, directories = found
        for point in points:
            point.directory = directories[point.name]
            if not os.path.isdir(point.directory):
                os.makedirs(point.directory)
                artifacts.write_yaml_atomic(os.path.join(point.directory, artifacts.SETTINGS_FILE), point.settings)
        return candidate, True
    digest = fingerprint(points)
    matrix_dir = artifacts.allocate_artifact_dir(parent, name)
    # the matrix directory is new and this run's own: its point directories take the
    # points' indexes directly (no lock and listing per point)
    digits = artifacts.index_digits(len(points))
    for point in points:
        point.directory = os.path.join(matrix_dir, "%0*d__%s" % (digits, point.index, point.name))
        os.mkdir(point.directory)
        artifacts.write_yaml_atomic(os.path.join(point.directory, artifacts.SETTINGS_FILE), point.settings)
    artifacts.write_yaml_atomic(os.path.join(matrix_dir, MATRIX_FILE), {
        "fingerprint": digest,
        "spec": spec or {},
        "points": [{"name": p.name, "directory": os.path.basename(p.directory), "settings": p.settings} for p in points],
    })
    return matrix_dir, False


def find_matrix_dir(parent, points, name="matbenchmarking"):
    """The matrix directory of the same matrix in ``parent`` and its points' directories
    ({name: path}), or None; nothing is created."""
    import yaml

    digest = fingerprint(points)
    for candidate in reversed(artifacts.find_artifact_dirs(parent, "*__" + artifacts.sanitize_name(name))):
        try:
            recorded = _load_yaml(os.path.join(candidate, MATRIX_FILE)) or {}
        except (OSError, ValueError, yaml.YAMLError):
            continue
        if isinstance(recorded, dict) and recorded.get("fingerprint") == digest:
            return candidate, _recorded_directories(candidate, recorded, points)
    return None


def _recorded_directories(matrix_dir, recorded, points):
    """The point directories a matrix plan records, each checked to be a directory of
    the matrix (a plan edited to point elsewhere is refused before anything is touched)."""
    entries = {}
    recorded_points = recorded.get("points")
    for item in recorded_points if isinstance(recorded_points, list) else ():
        if isinstance(item, dict) and "name" in item and isinstance(item["name"], str):
            entries[item["name"]] = item.get("directory")
    root = os.path.realpath(matrix_dir)
    directories = {}
    for point in points:
        name = entries.get(point.name)
        target = os.path.realpath(os.path.join(root, name)) if isinstance(name, str) and name else None
        if target is None or os.path.isabs(name) or os.path.dirname(target) != root:
            raise MatrixError("%s: point '%s' has directory %r, which is not a directory of the matrix (the plan "
                              "was edited?); nothing was touched" % (os.path.join(matrix_dir, MATRIX_FILE),
                                                                     point.name, name))
        directories[point.name] = target
    return directories


def read_exit_code(directory):
    try:
        with open(os.path.join(directory, artifacts.EXIT_CODE_FILE), encoding="utf-8") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None


def archive_previous_attempt(directory):
    """Move the files of an earlier attempt aside (never delete them)."""
    leftovers = [n for n in os.listdir(directory) if n not in (artifacts.SETTINGS_FILE, PREVIOUS_DIR, PLAN_FILE)]
    if not leftovers:
        return None
    previous = os.path.join(directory, PREVIOUS_DIR)
    os.makedirs(previous, exist_ok=True)
    attempt = os.path.join(previous, "attempt_%d" % (len(os.listdir(previous)) + 1))
    os.makedirs(attempt)
    for name in leftovers:
        shutil.move(os.path.join(directory, name), os.path.join(attempt, name))
    return attempt


# --------------------------------------------------------------------------
# running


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


class PointOutcome:
    """A point's execution and, when it honoured its harness's contract, its document."""

    __slots__ = ("execution", "document")

    def __init__(self, execution, document=None):
        self.execution = execution
        self.document = document

    ok = property(lambda self: self.execution.ok)
    exit_code = property(lambda self: self.execution.exit_code)
    error = property(lambda self: self.execution.error)
    duration = property(lambda self: self.execution.duration)


def record_outcome(point, execution, harness, section, timing):
    """Finish a point that ran (here or elsewhere): its harness document checked and kept as
    ``output.json``, or ``FAILURE``; then ``point.json`` (``timing``: when and where it ran) and
    ``exit_code`` last, the mark of a finished point. Returns its ``PointOutcome``."""
    directory = point.directory
    outcome = PointOutcome(execution)
    if execution.ok:
        try:
            outcome.document = harness.read_output(directory, section)
        except (HarnessOutputError, OSError) as exc:
            execution.exit_code, execution.error = EXIT_BAD_OUTPUT, str(exc)
    if outcome.ok:
        harness.keep_output(directory, outcome.document)
    else:
        detail = harness.failure_detail(directory)
        artifacts.write_failure(directory, execution.error + ("\n" + detail if detail else ""))
    artifacts.write_json_atomic(os.path.join(directory, POINT_FILE), dict(
        execution.as_dict(), name=point.name, command=point.command.argv, **timing))
    artifacts.write_text_atomic(os.path.join(directory, artifacts.EXIT_CODE_FILE), "%d\n" % execution.exit_code)
    return outcome


class MatrixRunner:
    """Run planned points with a parallelism policy; thread-safe progress.

    ``controller_alive`` (optional) is polled every ``WATCH_INTERVAL_S``: once it
    returns false (the ``ansible-playbook`` that started the run is gone), no new
    point starts, running points are cancelled (their process trees killed) and
    left unfinished (no ``exit_code``), so that a resume runs them again.
    """

    WATCH_INTERVAL_S = 0.25

    def __init__(self, matrix_dir, points, timeout, harness, executor, parallelism="sequential", stop_on_error=False,
                 on_progress=None, controller_alive=None, section=None, skip=None):
        self.matrix_dir = matrix_dir
        # {point name: reason}: points planned not to run (they cannot fit or be placed), not failures
        self.skip = dict(skip or {})
        self.section = section
        self.points = points
        self.timeout = timeout
        self.harness = harness
        self.executor = executor
        self.policy, self.width = parse_parallelism(parallelism)
        self.stop_on_error = stop_on_error
        self.on_progress = on_progress
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._started = None
        self._durations = []
        self._running = {}
        self.controller_alive = controller_alive
        self.abandoned = threading.Event()
        self.results = {}

    # -- one point

    def run_point(self, point):
        directory = point.directory
        archive_previous_attempt(directory)
        started_at, started = _now(), time.monotonic()
        # the host's load while the point ran (regression.noise flags a loaded host)
        load_start = list(os.getloadavg())
        artifacts.write_text_atomic(os.path.join(directory, artifacts.UUID_FILE), str(uuid.uuid4()) + "\n")
        handle = self.executor.start(point, point.command, directory)
        with self._lock:
            self._running[point.name] = handle
        try:
            execution = self.executor.wait(handle, self.timeout)
            if self.abandoned.is_set():
                return None  # cancelled because the controller died: left unfinished
            collected = self.executor.collect(handle, directory)
            if collected is not None:
                execution = collected
        except BaseException:
            self.executor.cancel(handle)
            raise
        finally:
            with self._lock:
                self._running.pop(point.name, None)
        return record_outcome(point, execution, self.harness, self.section, dict(
            started=started_at, ended=_now(), start_monotonic=started, end_monotonic=time.monotonic(),
            load_average_start=load_start, load_average_end=list(os.getloadavg()), cpu_count=os.cpu_count()))

    def _execute(self, point):
        if self._stop.is_set():
            return point, None
        outcome = self.run_point(point)
        if outcome is None:
            return point, None
        with self._lock:
            self.results[point.name] = ("failed" if not outcome.ok else "succeeded", outcome)
            self._durations.append(outcome.duration)
            if not outcome.ok and self.stop_on_error:
                self._stop.set()
        self._report()
        return point, outcome

    # -- progress

    def progress(self):
        with self._lock:
            counts = {"succeeded": 0, "failed": 0, "skipped": 0, "infeasible": 0}
            for status, _outcome in self.results.values():
                counts[status] += 1
            durations = list(self._durations)
        total = len(self.points)
        done = sum(counts.values())
        elapsed = time.monotonic() - self._started if self._started else 0.0
        remaining = total - done
        eta = None
        if durations and remaining:
            eta = remaining * (sum(durations) / len(durations)) / min(self.width, remaining)
        return {"total": total, "done": done, "succeeded": counts["succeeded"], "failed": counts["failed"],
                "skipped": counts["skipped"], "infeasible": counts["infeasible"], "remaining": remaining, "elapsed_s": round(elapsed, 3),
                "eta_s": round(eta, 3) if eta is not None else (0.0 if not remaining else None),
                "policy": self.policy, "width": self.width, "stopped": self._stop.is_set(), "updated": _now()}

    def _report(self):
        progress = self.progress()
        with self._lock:
            artifacts.write_json_atomic(os.path.join(self.matrix_dir, PROGRESS_FILE), progress)
        if self.on_progress and not self.abandoned.is_set():
            self.on_progress(progress)

    # -- policies

    def _watch_controller(self, finished):
        while not finished.wait(self.WATCH_INTERVAL_S):
            if not self.controller_alive():
                self.abandoned.set()
                self._stop.set()
                with self._lock:
                    running = list(self._running.values())
                for handle in running:
                    self.executor.cancel(handle)
                return

    def run(self):
        finished = threading.Event()
        watcher = None
        if self.controller_alive is not None:
            watcher = threading.Thread(target=self._watch_controller, args=(finished,), daemon=True)
            watcher.start()
        try:
            return self._run()
        finally:
            finished.set()
            if watcher is not None:
                watcher.join()

    def _run(self):
        self._started = time.monotonic()
        pending = []
        for point in self.points:
            if read_exit_code(point.directory) == 0:
                self.results[point.name] = ("skipped", None)
            elif point.name in self.skip:
                self.results[point.name] = ("infeasible", None)
            else:
                pending.append(point)
        self._report()
        if self.policy == "sequential":
            for point in pending:
                if self._stop.is_set():
                    break
                self._execute(point)
        elif self.policy == "barrier":
            with concurrent.futures.ThreadPoolExecutor(self.width) as pool:
                for start in range(0, len(pending), self.width):
                    if self._stop.is_set():
                        break
                    list(pool.map(self._execute, pending[start:start + self.width]))
        else:
            self._run_sliding(pending)
        summary = self.summary()
        summary["abandoned"] = self.abandoned.is_set()
        return summary

    def _run_sliding(self, pending):
        queue = list(pending)
        with concurrent.futures.ThreadPoolExecutor(self.width) as pool:
            running = set()
            while queue or running:
                while queue and len(running) < self.width and not self._stop.is_set():
                    running.add(pool.submit(self._execute, queue.pop(0)))
                if not running:
                    break
                done, running = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in done:
                    future.result()

    def summary(self):
        progress = self.progress()
        failed = []
        for point in self.points:
            status, outcome = self.results.get(point.name, ("not_run", None))
            if status == "failed":
                failed.append({"name": point.name, "directory": point.directory, "exit_code": outcome.exit_code,
                               "error": outcome.error})
        not_run = [p.name for p in self.points if p.name not in self.results]
        infeasible = [{"name": p.name, "directory": p.directory, "reason": self.skip[p.name]} for p in self.points
                      if self.results.get(p.name, ("",))[0] == "infeasible"]
        summary = dict(progress, not_run=len(not_run), not_run_points=not_run, failed_points=failed,
                       infeasible_points=infeasible, matrix_dir=self.matrix_dir)
        artifacts.write_json_atomic(os.path.join(self.matrix_dir, PROGRESS_FILE), summary)
        return summary


class MatrixRun:
    """One run of a planned matrix in its directory: what an executor's ``run`` gets
    (``executors/base.py``), the same for every executor.

    It holds the matrix directory, its points (their directories prepared), the harness, the
    benchmark section, the points skipped before deploy (``skip``: {name: reason}), the run policy
    (``timeout``, ``parallelism``, ``stop_on_error``), the callbacks (``on_progress``,
    ``controller_alive``) and whether the directory was ``resumed``, and offers the engine's
    services: ``run_points(executor)`` (the ``MatrixRunner``, for an executor that runs points),
    ``points_to_hand_over`` and ``handed_over`` (for one that hands the matrix to another engine),
    ``record_outcome`` (a point finished elsewhere)."""

    def __init__(self, matrix_dir, points, harness, section=None, timeout=None, parallelism="sequential",
                 stop_on_error=False, skip=None, on_progress=None, controller_alive=None, resumed=False):
        self.matrix_dir = matrix_dir
        self.points = points
        self.harness = harness
        self.section = section
        self.timeout = timeout
        self.parallelism = parallelism
        self.stop_on_error = stop_on_error
        self.skip = dict(skip or {})
        self.on_progress = on_progress
        self.controller_alive = controller_alive
        # the matrix directory was there from an earlier run (prepare_matrix_dir)
        self.resumed = resumed

    @classmethod
    def from_section(cls, matrix_dir, points, harness, section, skip=None, on_progress=None, controller_alive=None,
                     resumed=False):
        """The run of a benchmark section's matrix: its timeout, parallelism and stop_on_error."""
        return cls(matrix_dir, points, harness, section, timeout=section["timeout_s"],
                   parallelism=section["parallelism"], stop_on_error=section["stop_on_error"], skip=skip,
                   on_progress=on_progress, controller_alive=controller_alive, resumed=resumed)

    def run_points(self, executor):
        """Run the points one by one with ``executor``'s start/wait/collect/cancel (``MatrixRunner``:
        the policy, resume, stop_on_error, the controller watch); the runner's summary."""
        return MatrixRunner(self.matrix_dir, self.points, timeout=self.timeout, harness=self.harness, executor=executor,
                            parallelism=self.parallelism, stop_on_error=self.stop_on_error,
                            on_progress=self.on_progress, controller_alive=self.controller_alive,
                            section=self.section, skip=self.skip).run()

    def points_to_hand_over(self):
        """The points another engine is to run: those not finished yet (no ``exit_code`` 0) and not
        skipped before deploy; once every one finished, all of them but the skipped (the matrix again)."""
        runnable = [p for p in self.points if p.name not in self.skip]
        return [p for p in runnable if read_exit_code(p.directory) != 0] or runnable

    def record_outcome(self, point, execution, timing):
        """Finish a point another engine ran (``record_outcome`` with this run's harness and section)."""
        return record_outcome(point, execution, self.harness, self.section, timing)

    def handed_over(self, points, summary, rendered):
        """The matrix summary once another engine was given ``points`` (what it was given: ``rendered``):
        its own ``summary`` (None: nothing ran, what was rendered is only written), with the counts of
        the whole matrix (the points finished earlier are skipped, those that cannot fit infeasible);
        written to ``progress.json``."""
        if summary is None:
            summary = {"total": len(points), "done": 0, "succeeded": 0, "failed": 0, "skipped": 0,
                       "not_run": len(points), "not_run_points": [p.name for p in points], "failed_points": [],
                       "rendered_only": True, "abandoned": False}
        skipped = len(self.points) - len(points) - len(self.skip)
        summary.update(total=len(self.points), skipped=summary["skipped"] + skipped, resumed=self.resumed,
                       infeasible=len(self.skip),
                       infeasible_points=[{"name": p.name, "directory": p.directory, "reason": self.skip[p.name]}
                                          for p in self.points if p.name in self.skip],
                       matrix_dir=os.path.abspath(self.matrix_dir), rendered=rendered)
        artifacts.write_json_atomic(os.path.join(self.matrix_dir, PROGRESS_FILE), summary)
        return summary


def format_progress(progress):
    eta = progress.get("eta_s")
    return "matrix: %d/%d done (%d failed, %d skipped%s), %.0fs elapsed%s" % (
        progress["done"], progress["total"], progress["failed"], progress["skipped"],
        ", %d cannot fit or be placed" % progress["infeasible"] if progress.get("infeasible") else "",
        progress["elapsed_s"], ", ~%.0fs left" % eta if eta else "")
