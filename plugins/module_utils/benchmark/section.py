# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model of ``tests.benchmark`` (and of a test flow's ``tests.<flow>.benchmark``): the matrix, the
harness and the executor (from their registries) and their settings, capacity planning.
"""

from __future__ import annotations

import functools

from ansible_collections.perfscale.topsail.plugins.module_utils.config import validation
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError


DEFAULT_KEY = "tests.benchmark"
# a test flow's matrix: tests.<flow>.benchmark, validated as tests.benchmark is
FLOW_BENCHMARK = "benchmark"


@functools.cache
def benchmark_model():
    from typing import Any, Dict, List, Optional, Union

    import pydantic

    from ansible_collections.perfscale.topsail.plugins.module_utils import executors
    from ansible_collections.perfscale.topsail.plugins.module_utils import harnesses
    from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as matrix_lib

    class Matrix(pydantic.BaseModel):
        model_config = validation.strict()
        factors: Dict[str, Any] = {}
        common_settings: Dict[str, Any] = {}
        include: List[Dict[str, Any]] = []
        exclude: List[Dict[str, Any]] = []

    class Indicator(pydantic.BaseModel):
        model_config = validation.strict()
        command: Union[List[Union[str, int, float]], str]
        parameters: Optional[List[str]] = None
        description: Optional[str] = None

    class ToolboxFlow(pydantic.BaseModel):
        """The toolbox_flow harness: which flow runs for each point, where its settings go."""
        model_config = validation.strict()
        # tests.<point_flow>.steps run for each point (test, cleanup_after)
        point_flow: Optional[str] = None
        # dotted configuration key the point's settings are written under before its commands run
        settings_key: Optional[str] = None
        # 'group command' whose result.json is the point's result (None: the only one that wrote one)
        result_command: Optional[str] = None

    class Capacity(pydantic.BaseModel):
        """Plan every point before anything is deployed (module_utils/capacity, docs/capacity.md)."""
        model_config = validation.strict()
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
        model_config = validation.strict()
        cluster: validation.choice(("driver", "sutest")) = "driver"
        namespace: str = pydantic.Field(default="perfscale-benchmark", pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
        image: str = pydantic.Field(default="quay.io/perfscale/topsail:latest", min_length=1)
        image_pull_policy: Optional[validation.choice(("Always", "IfNotPresent", "Never"))] = None
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
        model_config = validation.strict()
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
        cluster: validation.choice(("driver", "sutest")) = "driver"
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
        model_config = validation.strict()
        enabled: bool = True
        name: str = pydantic.Field(default="matbenchmarking", min_length=1)
        harness: validation.choice(harnesses.harness_names()) = "perf_indicator"
        executor: validation.choice(executors.executor_names()) = "local"
        rehearsal: bool = False
        parallelism: Union[str, Dict[str, int]] = "sequential"
        stop_on_error: bool = False
        fail_on_point_failure: bool = True
        timeout_s: float = pydantic.Field(default=600, gt=0, le=validation.MAX_TIMEOUT_S)
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


def flow_benchmark_keys(config):
    """The matrix sections of the test flows: ``tests.<flow>.benchmark`` of each flow (``steps``) that has one."""
    return ["tests.%s.%s" % (name, FLOW_BENCHMARK) for name, section in sorted((config.get("tests") or {}).items())
            if isinstance(section, dict) and "steps" in section and isinstance(section.get(FLOW_BENCHMARK), dict)]


def read(config, key=DEFAULT_KEY):
    """The validated ``key`` section (``tests.benchmark`` or a flow's) as a plain dict (defaults filled in)."""
    return validation.read_with_model(config, key, benchmark_model())
