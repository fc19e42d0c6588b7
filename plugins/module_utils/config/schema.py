# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The schema of the configuration: every section's model, in one place.

Each section the collection reads has a pydantic model here (unknown keys are
errors, types and ranges are checked); the values a key may take come from the
registries (``export.backend`` from ``stores``, ``regression.method`` and its
options from ``regression.methods``, ``tests.benchmark.harness`` from
``harnesses``, ``tests.benchmark.executor`` from ``executors``), never from a
list written here. Sections the collection does not read (a project's own,
used by its command-arguments template) are left alone. Checking a whole
configuration before any work starts, planners included, is ``config_checks``'s
(it stands above the planners; this module stands below them).

pydantic is imported when a model is built, never at import time, and each model
is built once per process (``functools.cache`` on its factory): building a pydantic
class costs about a millisecond, and sections are read per run, per point and per KPI.
The registries a model reads are complete at import time (nothing registers later).
"""

from __future__ import annotations

import difflib
import functools

from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError, PerfscaleError


# upper bounds: a value past them is a typo (or 1e300), refused by name before it overflows later
MAX_TIMEOUT_S = 7 * 24 * 3600
MAX_TOOL_TIMEOUT_S = 24 * 3600


def _strict():
    import pydantic

    return pydantic.ConfigDict(extra="forbid")


def _choice(names):
    """A Literal type of the registry's names (pydantic lists them in its error)."""
    from typing import Literal

    return Literal[tuple(names)]


@functools.cache
def secrets_model():
    import pydantic

    class Secrets(pydantic.BaseModel):
        model_config = _strict()
        dir_env: str = pydantic.Field(default="PERFSCALE_SECRETS_DIR", min_length=1)

    return Secrets


@functools.cache
def capture_environment_model():
    from typing import List, Optional

    import pydantic

    class CaptureEnvironment(pydantic.BaseModel):
        model_config = _strict()
        enabled: bool = True
        gpu: bool = True
        nvidia_smi_timeout: int = pydantic.Field(default=30, gt=0, le=MAX_TOOL_TIMEOUT_S)
        # None: the collection's default list (host_environment.DEFAULT_PACKAGES)
        packages: Optional[List[str]] = None

    return CaptureEnvironment


@functools.cache
def benchmark_model():
    from typing import Any, Dict, List, Optional, Union

    import pydantic

    from ansible_collections.perfscale.topsail.plugins.module_utils import executors
    from ansible_collections.perfscale.topsail.plugins.module_utils import harnesses
    from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as matrix_lib

    class Matrix(pydantic.BaseModel):
        model_config = _strict()
        factors: Dict[str, Any] = {}
        common_settings: Dict[str, Any] = {}
        include: List[Dict[str, Any]] = []
        exclude: List[Dict[str, Any]] = []

    class Indicator(pydantic.BaseModel):
        model_config = _strict()
        command: Union[List[Union[str, int, float]], str]
        parameters: Optional[List[str]] = None
        description: Optional[str] = None

    class ToolboxFlow(pydantic.BaseModel):
        """The toolbox_flow harness: which flow runs for each point, where its settings go."""
        model_config = _strict()
        # tests.<point_flow>.steps run for each point (test, cleanup_after)
        point_flow: Optional[str] = None
        # dotted configuration key the point's settings are written under before its commands run
        settings_key: Optional[str] = None
        # 'group command' whose result.json is the point's result (None: the only one that wrote one)
        result_command: Optional[str] = None

    class Capacity(pydantic.BaseModel):
        """Plan every point before anything is deployed (module_utils/capacity, docs/capacity.md)."""
        model_config = _strict()
        enabled: bool = False
        # how a point asks for GPUs and memory: an entry of capacity/requests.py REQUESTS (llm_serving, fine_tuning)
        request: Optional[str] = None
        # the configuration's {name, source} mapping of the model (source: hf://org/name)
        model_key: Optional[str] = None
        # a config.json to plan with instead of the model's id
        model_config_file: Optional[str] = None
        # the GPU product (nvidia.com/gpu.product) when no cluster is read, or its memory as CUDA reports it
        gpu: Optional[str] = None
        gpu_memory_gib: Optional[float] = pydantic.Field(default=None, gt=0, le=4096)
        # skip the points that cannot fit or be placed (false: plan and report them, run them anyway)
        skip_infeasible: bool = True
        check_placement: bool = True
        # fetch a config.json from the Hugging Face Hub when the shipped table lacks the model
        online: bool = True
        # the vLLM release that serves the points ("0.11", "v0.10.2"): the calibration of its release line
        # (capacity/vllm_versions.py); null: the newest calibrated line, stated in every plan
        vllm_version: Optional[str] = None

    class KubernetesExecutor(pydantic.BaseModel):
        """executor: kubernetes: each point is a Job (see executors/kubernetes.py)."""
        model_config = _strict()
        cluster: _choice(("driver", "sutest")) = "driver"
        namespace: str = pydantic.Field(default="perfscale-benchmark", pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
        image: str = pydantic.Field(default="quay.io/perfscale/topsail:latest", min_length=1)
        image_pull_policy: Optional[_choice(("Always", "IfNotPresent", "Never"))] = None
        # the Python and the collection inside the image (null: this controller's, as on kubesim)
        python: Optional[str] = None
        collection_path: Optional[str] = None
        node_selector: Dict[str, str] = {}
        tolerations: List[Dict[str, Any]] = []
        resources: Dict[str, Any] = {}
        service_account: Optional[str] = None
        # names of this controller's environment variables the pods get too
        pass_env: List[str] = []
        keep: bool = False
        # a point's files come back through its pod log, as one archive of at most this size
        archive_limit_mib: float = pydantic.Field(default=8, gt=0, le=1024)

    class TektonExecutor(pydantic.BaseModel):
        """executor: tekton: the matrix as a PipelineRun (see module_utils/matrix/tekton_pipeline.py)."""
        model_config = _strict()
        namespace: str = pydantic.Field(default="perfscale-benchmark", pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
        image: str = pydantic.Field(default="quay.io/perfscale/topsail:latest", min_length=1)
        python: Optional[str] = None
        collection_path: Optional[str] = None
        service_account: Optional[str] = None
        resources: Dict[str, Any] = {}
        # settings whose values (or value combinations) each get their own group of tasks, in sequence
        unroll: List[str] = []
        # all | sequential | barrier:N | sliding:N; null: tests.benchmark.parallelism
        parallelism: Optional[str] = None
        # also create the PipelineRun on the cluster, follow it and bring the points back
        apply: bool = False
        cluster: _choice(("driver", "sutest")) = "driver"
        # annotations of the PipelineRun (Tekton passes them to its TaskRuns and pods)
        annotations: Dict[str, str] = {}

        @pydantic.field_validator("parallelism")
        @classmethod
        def _parallelism(cls, value):
            if value is not None and value != "all":
                try:
                    matrix_lib.parse_parallelism(value)
                except PerfscaleError as exc:
                    raise ValueError(str(exc) + " (or all)") from None
            return value

    class Benchmark(pydantic.BaseModel):
        model_config = _strict()
        enabled: bool = True
        name: str = pydantic.Field(default="matbenchmarking", min_length=1)
        harness: _choice(harnesses.harness_names()) = "perf_indicator"
        executor: _choice(executors.executor_names()) = "local"
        rehearsal: bool = False
        parallelism: Union[str, Dict[str, int]] = "sequential"
        stop_on_error: bool = False
        fail_on_point_failure: bool = True
        timeout_s: float = pydantic.Field(default=600, gt=0, le=MAX_TIMEOUT_S)
        name_template: Optional[str] = None
        matrix: Matrix = Matrix()
        indicators: Dict[str, Indicator] = {}
        # settings that describe the system under test (replicas, an image...): they label the
        # points and their KPIs, and are not given to the harness
        deployment_factors: List[str] = []
        toolbox_flow: ToolboxFlow = ToolboxFlow()
        capacity: Capacity = Capacity()
        kubernetes: KubernetesExecutor = KubernetesExecutor()
        tekton: TektonExecutor = TektonExecutor()

        @pydantic.field_validator("parallelism")
        @classmethod
        def _parallelism(cls, value):
            try:
                matrix_lib.parse_parallelism(value)
            except PerfscaleError as exc:
                raise ValueError(str(exc)) from None
            return value

    return Benchmark


@functools.cache
def postprocess_model():
    from typing import Any, Dict, List, Optional

    import pydantic

    class ReportSet(pydantic.BaseModel):
        """A named list of reports (MatrixBenchmarking's plots.yaml ``- id: ... generate: [...]``)."""
        model_config = _strict()
        id: str = pydantic.Field(min_length=1)
        generate: List[str] = pydantic.Field(min_length=1)

    class Postprocess(pydantic.BaseModel):
        model_config = _strict()
        workload: str = pydantic.Field(default="perf_indicators", min_length=1)
        # None: the generic reports then the workload's own (see reports.py and the workload)
        reports: Optional[List[str]] = None
        # named report lists, and the one to draw (instead of ``reports``)
        report_sets: List[ReportSet] = []
        report_set: Optional[str] = None
        # post-process only the points whose settings match (MatrixBenchmarking's --filters):
        # {setting: value or [values]}, or "key=value,key2=value2"
        filters: Optional[Any] = None

        @pydantic.model_validator(mode="after")
        def _known_set(self):
            ids = [item.id for item in self.report_sets]
            duplicated = sorted({name for name in ids if ids.count(name) > 1})
            if duplicated:
                raise ValueError("report_sets: id %s defined twice" % ", ".join(duplicated))
            if self.report_set is not None and self.report_set not in ids:
                raise ValueError("report_set %r: expected one of the report_sets ids (%s)"
                                 % (self.report_set, ", ".join(ids) or "none defined"))
            if self.report_set is not None and self.reports is not None:
                raise ValueError("report_set and reports: give one of them")
            self.filters = parse_filters(self.filters)
            return self
        # the workload of the Prometheus captures (workloads/prom.py); None: not post-processed
        prom_workload: Optional[str] = pydantic.Field(default="prom", min_length=1)
        strict: bool = False
        title: str = "perfscale.topsail results"

    return Postprocess


@functools.cache
def export_model():
    import pydantic

    from ansible_collections.perfscale.topsail.plugins.module_utils import stores

    fields = {
        "enabled": (bool, True),
        # a play-end export that leaves documents undelivered fails the test (otherwise a warning; the spool keeps them)
        "fail_test_on_fail": (bool, False),
        # post-processing a tree again (a replot: it has a finished plots directory already) exports again
        "enabled_on_replot": (bool, False),
        "backend": (_choice(stores.backend_names()), "sqlite"),
        "timeout_s": (float, pydantic.Field(default=10.0, gt=0, le=MAX_TOOL_TIMEOUT_S)),
    }
    # each backend brings the model of its own sub-section (export.<backend>)
    for name, backend in stores.BACKENDS.items():
        model = backend.settings_model()
        fields[name] = (model, pydantic.Field(default_factory=model))
    return pydantic.create_model("Export", __config__=_strict(), **fields)


@functools.cache
def export_artifacts_model():
    from typing import Optional

    import pydantic

    class ExportArtifacts(pydantic.BaseModel):
        model_config = _strict()
        # upload the run's artifact tree at the end of the run
        enabled: bool = False
        bucket: Optional[str] = None
        # objects go to <path_prefix>/<run directory name>-<run id[:8]>/
        path_prefix: str = "perfscale"
        # http(s)://host[:port] of any S3-compatible store (MinIO, Ceph RGW, AWS: https://s3.<region>.amazonaws.com)
        endpoint_url: Optional[str] = None
        region: str = "us-east-1"
        # a file of the secrets directory: YAML with access_key_id and secret_access_key
        credentials_file: Optional[str] = None
        # an upload that fails fails the test (otherwise a warning, and the run's verdict stands)
        fail_test_on_fail: bool = False
        parallel: int = pydantic.Field(default=4, ge=1, le=64)
        # files larger than this go in parts of this size (S3's smallest part is 5 MiB)
        part_size_mib: int = pydantic.Field(default=8, ge=5, le=5120)
        timeout_s: float = pydantic.Field(default=60.0, gt=0, le=MAX_TOOL_TIMEOUT_S)

        @pydantic.model_validator(mode="after")
        def _complete_when_enabled(self):
            if self.enabled:
                missing = [name for name in ("bucket", "endpoint_url", "credentials_file") if not getattr(self, name)]
                if missing:
                    raise ValueError("enabled: true needs %s" % ", ".join(missing))
                if not str(self.endpoint_url).startswith(("http://", "https://")):
                    raise ValueError("endpoint_url %r: expected http(s)://host[:port]" % self.endpoint_url)
            return self

    return ExportArtifacts


@functools.cache
def regression_model():
    from typing import Any, Dict, List, Optional

    import pydantic

    from ansible_collections.perfscale.topsail.plugins.module_utils.regression import methods
    from ansible_collections.perfscale.topsail.plugins.module_utils.regression.baselines import BASELINE_POLICIES

    class Noise(pydantic.BaseModel):
        model_config = _strict()
        # a test whose repetitions spread more than this (the workload's measure, e.g. the CV of
        # the repetition times) is noisy; None: never flagged for spread
        max_spread: Optional[float] = pydantic.Field(default=0.10, gt=0, le=1000)
        # ... or whose host was this loaded (1-minute load average per CPU) while it ran
        max_load_per_cpu: Optional[float] = pydantic.Field(default=0.75, gt=0, le=1000)
        # which history runs a baseline is made of (regression/verdicts.py, BASELINE_POLICIES)
        baseline: _choice(BASELINE_POLICIES) = "prefer_quiet"
        # the older spelling: true is baseline: all, false is baseline: quiet_only
        keep_in_baseline: Optional[bool] = None

        @pydantic.model_validator(mode="after")
        def _older_spelling(self):
            if self.keep_in_baseline is not None:
                meant = "all" if self.keep_in_baseline else "quiet_only"
                # the configuration file spells the default out: only another choice can disagree
                if self.baseline not in ("prefer_quiet", meant):
                    raise ValueError("keep_in_baseline (%s) and baseline (%s) disagree: give baseline only"
                                     % (self.keep_in_baseline, self.baseline))
                self.baseline = meant
            return self

    class Regression(pydantic.BaseModel):
        model_config = _strict()
        enabled: bool = True
        method: _choice(methods.method_names()) = methods.DEFAULT_METHOD
        fail_test_on_regression: bool = False
        fail_on_persisting: bool = False
        fail_on_drift: bool = False
        require_history: bool = False
        compare_across_machines: bool = False
        machine_keys: Optional[List[str]] = None
        noise: Noise = Noise()
        short_history_threshold: float = pydantic.Field(default=0.10, gt=0, le=1000)
        # ... and is told apart from the history's own spread at this p-value (else: inconclusive)
        short_history_max_pvalue: float = pydantic.Field(default=0.01, gt=0, lt=1)
        options: Dict[str, Dict[str, Any]] = {}
        comparison_keys: Optional[List[str]] = None
        ignored_keys: Optional[List[str]] = None
        sorting_keys: Optional[List[str]] = None
        ignored_entries: Optional[Dict[str, List[Any]]] = None

        @pydantic.field_validator("options")
        @classmethod
        def _options(cls, value):
            for method, options in value.items():
                try:
                    methods.resolve_options(method, options)
                except PerfscaleError as exc:
                    raise ValueError(str(exc)) from None
            return value

    return Regression


@functools.cache
def clusters_model():
    import pydantic

    class Lease(pydantic.BaseModel):
        """One test run at a time per cluster (module_utils/kube/cluster_lease.py)."""
        model_config = _strict()
        namespace: str = pydantic.Field(default="perfscale-topsail", pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
                                        max_length=63)
        # a holder silent this long is taken over; it renews every third of it
        duration_s: int = pydantic.Field(default=60, ge=3, le=3600)
        # seconds between two looks of a waiting run
        poll_s: float = pydantic.Field(default=5.0, gt=0, le=300)
        # give up waiting after this long (0: wait as long as it takes)
        wait_timeout_s: float = pydantic.Field(default=0, ge=0)

    class Clusters(pydantic.BaseModel):
        model_config = _strict()
        # leave what a flow made: its cleanup_after step does not run
        keep: bool = False
        # label of the namespaces a flow creates (its cleanups select them by it)
        owner_label: str = pydantic.Field(default="perfscale.topsail/flow", min_length=1)
        lease: Lease = Lease()

    return Clusters


def parse_filters(value):
    """``{setting: [values]}`` of ``postprocess.filters``: a mapping (a value or a list of values per
    setting) or MatrixBenchmarking's ``key=value,key2=value2`` text; ValueError naming what is wrong."""
    if value in (None, "", {}):
        return {}
    pairs = []
    if isinstance(value, str):
        for item in value.split(","):
            key, sep, text = item.partition("=")
            if not sep or not key.strip():
                raise ValueError("filters %r: expected key=value[,key=value...]" % value)
            pairs.append((key.strip(), text.strip()))
    elif isinstance(value, dict):
        for key, wanted in value.items():
            for item in wanted if isinstance(wanted, list) else [wanted]:
                pairs.append((str(key), item))
    else:
        raise ValueError("filters: expected a mapping of settings or key=value,... text, got %s"
                         % type(value).__name__)
    filters = {}
    for key, wanted in pairs:
        filters.setdefault(key, []).append(wanted)
    return filters


@functools.cache
def notifications_model():
    from typing import Optional

    import pydantic

    def _http_url(value, key):
        if value is not None and not str(value).startswith(("http://", "https://")):
            raise ValueError("%s %r: expected http(s)://host[:port][/path]" % (key, value))

    def _token_url(value, key):
        """A URL a bearer token is sent to: https://, or a loopback host (a test stand-in)."""
        from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs

        problem = secret_refs.cleartext_problem(value, key, "bearer tokens")
        if problem:
            raise ValueError(problem)

    class GitHub(pydantic.BaseModel):
        """One comment per pull request and test, updated by later runs (module_utils/notify/github.py)."""
        model_config = _strict()
        enabled: bool = False
        # the public API; GitHub Enterprise: https://<host>/api/v3
        api_url: str = "https://api.github.com"
        # owner/name
        repo: Optional[str] = pydantic.Field(default=None, pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
        pr_number: Optional[int] = pydantic.Field(default=None, ge=1)
        # a file of the secrets directory holding the token
        token_file: Optional[str] = None

        @pydantic.model_validator(mode="after")
        def _complete_when_enabled(self):
            _http_url(self.api_url, "api_url")
            if self.enabled:
                missing = [name for name in ("repo", "pr_number", "token_file") if not getattr(self, name)]
                if missing:
                    raise ValueError("enabled: true needs %s" % ", ".join(missing))
                _token_url(self.api_url, "api_url")
            return self

    class Slack(pydantic.BaseModel):
        """One message per run, in a thread per pull request (module_utils/notify/slack.py)."""
        model_config = _strict()
        enabled: bool = False
        api_url: str = "https://slack.com/api"
        # a channel id (C0123...) or name
        channel: Optional[str] = None
        token_file: Optional[str] = None

        @pydantic.model_validator(mode="after")
        def _complete_when_enabled(self):
            _http_url(self.api_url, "api_url")
            if self.enabled:
                missing = [name for name in ("channel", "token_file") if not getattr(self, name)]
                if missing:
                    raise ValueError("enabled: true needs %s" % ", ".join(missing))
                _token_url(self.api_url, "api_url")
            return self

    class Notifications(pydantic.BaseModel):
        model_config = _strict()
        # the test's name in the messages and the comment's marker (None: the presets applied, joined by '+')
        test_name: Optional[str] = None
        # at most this many changed KPIs in a message (the largest first)
        top_changes: int = pydantic.Field(default=5, ge=0, le=50)
        timeout_s: float = pydantic.Field(default=20.0, gt=0, le=MAX_TOOL_TIMEOUT_S)
        # a rate limit's Retry-After up to this many seconds is waited for once; longer: spooled
        max_retry_after_s: float = pydantic.Field(default=60.0, ge=0, le=3600)
        github: GitHub = GitHub()
        slack: Slack = Slack()

    return Notifications


# dotted section key -> model factory
# a test flow's matrix: tests.<flow>.benchmark, validated as tests.benchmark is
FLOW_BENCHMARK = "benchmark"

SECTIONS = {
    "secrets": secrets_model,
    "tests.capture_environment": capture_environment_model,
    "tests.benchmark": benchmark_model,
    "postprocess": postprocess_model,
    "export": export_model,
    "export_artifacts": export_artifacts_model,
    "regression": regression_model,
    "clusters": clusters_model,
    "notifications": notifications_model,
}


def validate_section(config, section, model):
    """Validate ``config[section]`` with a pydantic model (extra keys forbidden).

    Returns the model instance. A misspelt or wrongly typed key is a
    ConfigError naming the section and the key.
    """
    import pydantic

    data = config_lib.get_dotted(config, section)
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        problems = []
        for error in exc.errors():
            location = ".".join(str(part) for part in error.get("loc", ()))
            key = "%s.%s" % (section, location) if location else section
            if error.get("type") == "extra_forbidden":
                parent = model
                for part in error.get("loc", ())[:-1]:
                    field = getattr(parent, "model_fields", {}).get(part)
                    parent = getattr(field, "annotation", None)
                known = sorted(getattr(parent, "model_fields", {}) or getattr(model, "model_fields", {}))
                hint = difflib.get_close_matches(str(error["loc"][-1]), known, n=1)
                suffix = " (did you mean '%s'?)" % hint[0] if hint else ""
                problems.append("unknown key '%s'%s" % (key, suffix))
            else:
                message = error.get("msg", "invalid value")
                if message.startswith("Value error, "):
                    message = message[len("Value error, "):]
                problems.append("'%s': %s" % (key, message))
        raise ConfigError("config section '%s' is invalid: %s" % (section, "; ".join(problems))) from None


def flow_benchmark_keys(config):
    """The matrix sections of the test flows: ``tests.<flow>.benchmark`` of each flow (``steps``) that has one."""
    return ["tests.%s.%s" % (name, FLOW_BENCHMARK) for name, section in sorted((config.get("tests") or {}).items())
            if isinstance(section, dict) and "steps" in section and isinstance(section.get(FLOW_BENCHMARK), dict)]


def _model_of(section):
    if section in SECTIONS:
        return SECTIONS[section]
    parts = section.split(".")
    if len(parts) == 3 and parts[0] == "tests" and parts[2] == FLOW_BENCHMARK:
        return benchmark_model
    raise ConfigError("config section '%s' has no schema; sections with one: %s, tests.<flow>.%s"
                      % (section, ", ".join(SECTIONS), FLOW_BENCHMARK))


def read_section(config, section):
    """The validated section as a plain dict (defaults filled in)."""
    return validate_section(config, section, _model_of(section)()).model_dump()
