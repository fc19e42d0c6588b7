"""The inventory_hosts executor: in the registry, how it is selected (explicitly, or by the group
benchmark_hosts with the default executor), the empty-group error and the conflict rule, and its
methods as the hosts path (payload, the host-side run, collecting the archive back)."""

import json
import os
import sys

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import executors
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as cfg
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ExecutorError, MatrixError
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import base as executor_base
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import inventory_hosts
from ansible_collections.perfscale.topsail.plugins.module_utils.executors.inventory_hosts import InventoryHostsExecutor
from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import job as benchmark
from ansible_collections.perfscale.topsail.plugins.module_utils.matrix import engine as mx

SHIPPED = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "config", "config.yaml"))
SMALL = {"tests.benchmark.name_template": "{indicator}_{size}",
         "tests.benchmark.matrix": {"factors": {"indicator": "matmul", "size": [16, 32]},
                                    "common_settings": {"backend": "numpy", "reps": 2, "warmup": 0},
                                    "include": [], "exclude": []}}
GROUP = {"benchmark_hosts": ["gpu-1", "gpu-2"], "all": ["localhost", "gpu-1", "gpu-2"], "ungrouped": ["localhost"]}


def config_with(**overrides):
    return cfg.resolve_config(SHIPPED, overrides=dict(SMALL, **overrides)).config


def test_the_registry_lists_inventory_hosts_and_the_schema_offers_it():
    assert "inventory_hosts" in executors.executor_names()
    assert executors.executor_class("inventory_hosts") is InventoryHostsExecutor
    section = config_schema.read_section(config_with(**{"tests.benchmark.executor": "inventory_hosts"}),
                                         "tests.benchmark")
    assert section["executor"] == "inventory_hosts"
    executor = executors.create_executor("inventory_hosts", section=section)
    assert isinstance(executor, InventoryHostsExecutor)
    assert isinstance(executor, executor_base.WholeMatrixExecutor) and executor.harness.name == "perf_indicator"


def test_explicit_selection_with_hosts_in_the_group():
    assert executors.select_executor("inventory_hosts", GROUP) == "inventory_hosts"


def test_the_group_selects_it_when_the_executor_is_left_at_its_default():
    assert config_schema.read_section(config_with(), "tests.benchmark")["executor"] == "local"
    assert executors.select_executor("local", GROUP) == "inventory_hosts"
    # without hosts in the group, the default stays local
    for groups in (None, {}, {"all": ["localhost"]}, {"benchmark_hosts": []}):
        assert executors.select_executor("local", groups) == "local"


@pytest.mark.parametrize("groups", [None, {}, {"all": ["localhost"]}, {"benchmark_hosts": []}])
def test_inventory_hosts_without_hosts_in_the_group_is_one_line_naming_the_key_and_the_group(groups):
    with pytest.raises(ExecutorError) as caught:
        executors.select_executor("inventory_hosts", groups)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("tests.benchmark.executor inventory_hosts: the inventory group benchmark_hosts is "
                              "empty or missing")


@pytest.mark.parametrize("configured", ["kubernetes", "tekton"])
def test_another_executor_with_hosts_in_the_group_is_refused_in_one_line(configured):
    with pytest.raises(ExecutorError) as caught:
        executors.select_executor(configured, GROUP)
    assert str(caught.value) == (
        "tests.benchmark.executor %s with the inventory group benchmark_hosts: expected local or inventory_hosts "
        "(each host runs its points as subprocesses); remove the group (2 host(s): gpu-1, gpu-2) to use %s"
        % (configured, configured))
    # without hosts in the group, it is the one that runs the matrix
    assert executors.select_executor(configured, {"benchmark_hosts": []}) == configured


def test_an_unknown_executor_is_refused_before_the_group_is_looked_at():
    with pytest.raises(ExecutorError, match="'k8s': expected one of inventory_hosts, kubernetes, local, tekton"):
        executors.select_executor("k8s", GROUP)


def test_the_executor_methods_are_the_hosts_path(tmp_path):
    config = config_with(**{"tests.benchmark.executor": "inventory_hosts"})
    plan = benchmark.plan_benchmark(config, python=InventoryHostsExecutor.python_token)
    executor = InventoryHostsExecutor.for_plan(plan)
    # the controller: the host's share of the tree and its payload (render: the points still to run)
    matrix_dir, resumed, payload = executor.plan_host(plan.points, str(tmp_path / "run"), "gpu-1")
    assert not resumed and os.path.dirname(matrix_dir) == str(tmp_path / "run" / "hosts" / "gpu-1")
    assert payload == executor.render(plan.points, matrix_dir)
    assert [p["directory"] for p in payload["points"]] == ["000__matmul_16", "001__matmul_32"]
    # the host: the payload alone, with the local executor, under the host's Python
    work = tmp_path / "host-work"
    summary = InventoryHostsExecutor.run_on_host(json.loads(json.dumps(payload)), str(work), sys.executable)
    assert (summary["done"], summary["succeeded"], summary["failed"]) == (2, 2, 0)
    # back on the controller: the archive into the run tree, the host's progress.json
    finished = executor.unpack(summary["archive"], matrix_dir, [p["directory"] for p in payload["points"]])
    assert finished == ["000__matmul_16", "001__matmul_32"]
    failed, counts = executor.finish_host(matrix_dir, "gpu-1", len(plan.points), payload["points"], summary)
    assert failed == [] and counts == dict(total=2, succeeded=2, failed=0, skipped=0, not_run=0)
    progress = json.load(open(os.path.join(matrix_dir, mx.PROGRESS_FILE)))
    assert progress["host"] == "gpu-1" and progress["succeeded"] == 2
    assert all(mx.read_exit_code(os.path.join(matrix_dir, name)) == 0 for name in finished)
    # nothing left for that host; the executor does not run the matrix in this process
    assert executor.plan_host(plan.points, str(tmp_path / "run"), "gpu-1")[2]["points"] == []
    with pytest.raises(ExecutorError, match="runs the matrix on the hosts of the inventory group benchmark_hosts"):
        executor.run_rendered(plan.points, matrix_dir, plan.harness, payload)


def test_a_plan_for_another_executor_cannot_go_to_the_hosts(tmp_path):
    plan = benchmark.plan_benchmark(config_with(**{"tests.benchmark.executor": "tekton"}),
                                    python=inventory_hosts.PYTHON_TOKEN)
    with pytest.raises(MatrixError, match="executor tekton with the inventory group benchmark_hosts: expected local "
                                          "or inventory_hosts .*; remove the group to use tekton$"):
        InventoryHostsExecutor.for_plan(plan)
