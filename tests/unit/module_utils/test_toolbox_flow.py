"""The toolbox_flow harness (a matrix point runs toolbox commands on a cluster), the flows' matrix sections
and the fine_tuning workload, without a cluster: planning, the point's child command and environment, its
result, its failure, and the errors a user sees."""

import json
import os

import pytest
import yaml

from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import checks as config_checks
from ansible_collections.perfscale.topsail.plugins.module_utils.benchmark import job as benchmark
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import flows
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import postprocess
from ansible_collections.perfscale.topsail.plugins.module_utils.run import context as run_context
from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox.command_args import yaml_safe_json
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError, HarnessOutputError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import get_harness
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import toolbox_flow

REPO = os.path.join(os.path.dirname(__file__), "..", "..", "..")
SHIPPED = os.path.join(REPO, "config", "config.yaml")
DOCUMENT = {"name": "fine_tuning", "framework": "fms", "@parameters": {"model_name": "m", "gpu": 1},
            "@result": {"train_runtime": 10.0, "train_samples_per_second": 4.0}}


def shipped(*presets, **overrides):
    return config_lib.resolve_config(SHIPPED, presets=",".join(presets), overrides=overrides).config


def test_a_point_writes_its_settings_into_the_configuration_and_runs_the_point_flow():
    config = shipped("fine_tuning", "fine_tuning_dgx")
    plan = benchmark.plan_benchmark(config, "tests.fine_tuning.benchmark")
    assert len(plan.points) == 24 and plan.points[0].name == "gpu1_x1_bs4"
    command = plan.points[0].command
    extra = json.loads(command.argv[command.argv.index("-e") + 1])
    assert command.argv[-1] == "perfscale.topsail.flow_point" and extra["point_flow"] == "fine_tuning_point"
    assert extra["overrides"] == {"tests.fine_tuning.test_settings.gpu": 1,
                                  "tests.fine_tuning.test_settings.dataset_replication": 1,
                                  "tests.fine_tuning.test_settings.hyper_parameters.per_device_train_batch_size": 4,
                                  "tests.fine_tuning.test_settings.pod_count": 1}
    # the configuration travels in the environment, never on the command line
    assert json.loads(command.env[toolbox_flow.CONFIG_ENV])["tests"]["fine_tuning"]["namespace"] == "fine-tuning-testing"
    assert "fine-tuning-testing" not in " ".join(command.argv)
    # applying the overrides gives the point's configuration, as the child resolves it
    point = config_lib.resolve_config(json.loads(command.env[toolbox_flow.CONFIG_ENV]), overrides=extra["overrides"])
    assert point.config["tests"]["fine_tuning"]["test_settings"]["hyper_parameters"]["per_device_train_batch_size"] == 4
    assert point.config["tests"]["fine_tuning"]["test_settings"]["hyper_parameters"]["num_train_epochs"] == 1


def test_every_shipped_flow_preset_plans():
    for presets, key, count in ((("fine_tuning", "fine_tuning_smoke"), "tests.fine_tuning.benchmark", 2),
                                (("llm_serving", "llm_serving_smoke"), "tests.llm_serving.benchmark", 2),
                                (("llm_serving", "llm_serving_kserve"), "tests.llm_serving.benchmark", 8),
                                ((), "tests.llm_serving.benchmark", 3)):
        config = shipped(*presets)
        config_checks.validate_config(config)
        assert len(benchmark.plan_benchmark(config, key).points) == count, presets


@pytest.mark.parametrize("overrides, message", [
    ({"tests.fine_tuning.benchmark.matrix.factors": {"gpuu": [1, 2]}},
     "tests.fine_tuning.benchmark: point 'gpu1_x1': key 'tests.fine_tuning.test_settings.gpuu' does not exist"),
    ({"tests.fine_tuning.benchmark.toolbox_flow.point_flow": "nowhere"},
     "tests.fine_tuning.benchmark: toolbox_flow.point_flow 'nowhere': the configuration has no flow tests.nowhere.steps"),
    ({"tests.fine_tuning.benchmark.toolbox_flow.settings_key": None},
     "tests.fine_tuning.benchmark: the toolbox_flow harness needs toolbox_flow.point_flow"),
    ({"tests.fine_tuning.benchmark.toolbox_flow.result_command": "llm_load"},
     "tests.fine_tuning.benchmark: toolbox_flow.result_command 'llm_load': expected 'group command'"),
    ({"tests.llm_serving.benchmark.toolbox_flow": {"point_flow": "llm_serving_point", "settings_key": "x"}},
     "tests.llm_serving.benchmark: toolbox_flow.settings_key 'x': expected a mapping of the configuration"),
    ({"tests.llm_serving.benchmark.toolbox_flow": {"point_flow": "llm_serving_point", "settingz_key": "x"}},
     "config section 'tests.llm_serving.benchmark' is invalid: unknown key 'tests.llm_serving.benchmark.toolbox_flow.settingz_key' "
     "(did you mean 'settings_key'?)"),
    ({"tests.fine_tuning.benchmark.timeout_s": -1},
     "config section 'tests.fine_tuning.benchmark' is invalid: 'tests.fine_tuning.benchmark.timeout_s'"),
])
def test_a_wrong_flow_matrix_is_one_line_before_anything_runs(overrides, message):
    document = config_lib.load_config_document(SHIPPED, [])
    config = {k: v for k, v in document.items() if k != "ci_presets"}
    for key, value in overrides.items():
        if key.endswith(".factors"):
            config["tests"]["fine_tuning"]["name_template"] = None
            config["tests"]["fine_tuning"]["benchmark"]["name_template"] = "gpu{gpuu}_x1"
        parent, _sep, leaf = key.rpartition(".")
        node = config_lib.get_dotted(config, parent)
        node[leaf] = value
    with pytest.raises(ConfigError) as raised:
        config_checks.validate_config(config)
    assert str(raised.value).startswith(message), str(raised.value)
    assert "\n" not in str(raised.value)


def test_the_matrix_item_of_a_flow():
    checked = flows.check_definition({"test": [{"matrix": "tests.fine_tuning.benchmark"}]}, "tests.x.steps")
    assert checked["test"] == [{"kind": "matrix", "matrix": "tests.fine_tuning.benchmark"}]
    with pytest.raises(ConfigError, match=r"tests.x.steps.test\[0\]: a matrix item is \{matrix: tests.<flow>.benchmark\}"):
        flows.check_definition({"test": [{"matrix": "benchmark"}]}, "tests.x.steps")


def _command_dir(point, name, document=None, failure=None):
    path = os.path.join(point, name)
    os.makedirs(path)
    if document is not None:
        with open(os.path.join(path, "result.json"), "w", encoding="utf-8") as handle:
            handle.write(document if isinstance(document, str) else json.dumps(document))
    if failure:
        with open(os.path.join(path, "FAILURE"), "w", encoding="utf-8") as handle:
            handle.write(failure)
    return path


def test_the_point_result_is_the_result_json_a_command_wrote(tmp_path):
    harness = get_harness("toolbox_flow")
    section = {"toolbox_flow": {"point_flow": "p", "settings_key": "k", "result_command": None}}
    with pytest.raises(HarnessOutputError, match="no command of the point wrote result.json"):
        harness.read_output(str(tmp_path), section)
    _command_dir(str(tmp_path), "000__kserve__deploy_model_x")
    _command_dir(str(tmp_path), "001__llm_load__run_x", DOCUMENT)
    assert harness.read_output(str(tmp_path), section) == DOCUMENT
    _command_dir(str(tmp_path), "002__fine_tuning__run_fine_tuning_job", dict(DOCUMENT, name="other"))
    with pytest.raises(HarnessOutputError, match="several commands of the point wrote result.json .*set toolbox_flow.result_command"):
        harness.read_output(str(tmp_path), section)
    section["toolbox_flow"]["result_command"] = "llm_load run"
    assert harness.read_output(str(tmp_path), section)["name"] == "fine_tuning"
    _command_dir(str(tmp_path), "003__llm_load__run_y", "{not json")
    with pytest.raises(HarnessOutputError, match=r"^003__llm_load__run_y/result.json: harness output is not JSON"):
        harness.read_output(str(tmp_path), section)
    harness.keep_output(str(tmp_path), DOCUMENT)
    with open(os.path.join(str(tmp_path), "output.json"), encoding="utf-8") as handle:
        assert json.load(handle) == DOCUMENT


def test_a_failed_point_says_which_step_and_command_broke(tmp_path):
    harness = get_harness("toolbox_flow")
    assert harness.failure_detail(str(tmp_path)) == ""
    with open(os.path.join(str(tmp_path), "flow.json"), "w", encoding="utf-8") as handle:
        json.dump({"steps": ["test            FAILED: deploy", "cleanup_after   ok"]}, handle)
    _command_dir(str(tmp_path), "000__kserve__deploy_model_x", failure="InferenceService s/llm: ModelLoadFailed")
    detail = harness.failure_detail(str(tmp_path))
    assert detail.splitlines() == ["--- steps ---", "test            FAILED: deploy", "cleanup_after   ok",
                                   "--- 000__kserve__deploy_model_x ---", "InferenceService s/llm: ModelLoadFailed"]


def test_a_point_playbook_records_its_configuration_but_no_run_identity(tmp_path):
    resolved = config_lib.resolve_config({"tests": {"x": {"a": 1}}}, overrides={"tests.x.a": 2})
    written = run_context.record_run_config(str(tmp_path), resolved, identity=False)
    assert sorted(written) == ["config", "overrides", "presets_applied"]
    assert not os.path.exists(os.path.join(str(tmp_path), "run.json"))
    assert "run" in run_context.record_run_config(str(tmp_path / "run"), resolved)


def test_command_args_json_is_read_back_by_yaml_as_the_same_values():
    for value in (2e-05, 1e20, 0.5, -3, "1e5", {"lr": 2e-05, "tags": ["a", None, True]}, [1.5e-10]):
        assert yaml.safe_load(yaml_safe_json(value)) == value


def _write(path, name, content):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, name), "w", encoding="utf-8") as handle:
        handle.write(content if isinstance(content, str) else json.dumps(content))


def test_the_fine_tuning_workload_labels_kpis_with_the_job_and_the_platform(tmp_path):
    root = str(tmp_path)
    _write(root, "run.json", {"run_id": "r1"})
    _write(os.path.join(root, "003__rhods__deploy_ods_fine_tuning", "000__cluster__deploy_operator"), "csv_version.txt", "2.25.0\n")
    _write(os.path.join(root, "010__cluster__capture_environment"), "labels.json",
           {"gpu_product": "8x NVIDIA-H100", "openshift_version": "4.19.9", "gpu_count": 8,
            "worker_instance_types": "1x p5.48xlarge", "kubernetes_version": "v1.32"})
    matrix = os.path.join(root, "011__fine_tuning")
    good, bad = os.path.join(matrix, "000__gpu8_x1"), os.path.join(matrix, "001__gpu8_x2")
    summary = {"train_runtime": 100.0, "train_samples_per_second": 40.0, "train_steps_per_second": 1.2,
               "train_tokens_per_second": 14400.0, "final_loss": 0.9, "gpus_total": 8, "losses": [{"loss": 1.5, "epoch": 0.5}, {"loss": 0.9, "epoch": 1.0}]}
    _write(good, "output.json", {"name": "fine_tuning", "framework": "fms", "@result": summary,
                                 "@parameters": {"model_name": "granite", "dataset_name": "alpaca", "dataset_replication": 1,
                                                 "gpu": 8, "pod_count": 1, "container_image": "img:1",
                                                 "hyper_parameters": {"per_device_train_batch_size": 4,
                                                                      "peft_method": "lora", "r": 8, "lora_alpha": 16,
                                                                      "target_modules": ["q_proj", "v_proj"]}}})
    _write(bad, "FAILURE", "PyTorchJob ft/fine-tuning Failed: CUDA out of memory")
    _write(os.path.join(bad, "000__fine_tuning__run_fine_tuning_job_fine_tuning"), "_params.yaml",
           yaml.safe_dump({"model_name": "granite", "dataset_name": "alpaca", "dataset_replication": 2, "gpu": 8,
                           "pod_count": 1, "workload": "fms", "container_image": "img:1", "hyper_parameters": {}}))
    for point, settings, code in ((good, {"gpu": 8, "dataset_replication": 1}, 0), (bad, {"gpu": 8, "dataset_replication": 2}, 2)):
        _write(point, "settings.yaml", yaml.safe_dump(settings))
        _write(point, "exit_code", "%d\n" % code)
    config = config_lib.resolve_config(SHIPPED, presets="fine_tuning").config
    config["export"]["enabled"] = False
    config["regression"]["enabled"] = False
    summary_out = postprocess.visualize(root, config, ["fine_tuning"])
    with open(os.path.join(summary_out["plots_dir"], "kpis.json"), encoding="utf-8") as handle:
        payloads = {p["labels"]["test_path"].rsplit("/", 1)[-1]: p for p in json.load(handle)}
    labels = payloads["000__gpu8_x1"]["labels"]
    assert labels["rhoai_version"] == "2.25.0" and labels["gpu_product"] == "8x NVIDIA-H100" and labels["run_id"] == "r1"
    assert labels["gpus_total"] == 8 and labels["batch_size"] == 4
    assert (labels["peft_method"], labels["lora_rank"], labels["lora_alpha"], labels["lora_dropout"],
            labels["lora_target_modules"]) == ("lora", "8", "16", None, "q_proj,v_proj")
    kpis = payloads["000__gpu8_x1"]["kpis"]
    assert kpis["train_samples_per_second"]["value"] == 40.0
    # 14,400 tokens/s on 8 GPUs: 1,800 per GPU; a million tokens take 69.4 s on 8 GPUs = 0.154 GPU-hours
    assert kpis["train_tokens_per_second_per_gpu"]["value"] == 1800.0
    assert kpis["gpu_hours_per_million_tokens"]["value"] == pytest.approx(8 * 1e6 / (3600 * 14400.0))
    assert kpis["gpu_hours_per_million_tokens"]["unit"] == "GPU-h/Mtok"
    # the failed point has no KPI payload; the error report says why it failed
    assert sorted(payloads) == ["000__gpu8_x1"]
    with open(os.path.join(summary_out["plots_dir"], "error_report.html"), encoding="utf-8") as handle:
        assert "CUDA out of memory" in handle.read()
    with open(os.path.join(summary_out["plots_dir"], "fine_tuning_throughput.html"), encoding="utf-8") as handle:
        assert "Training loss" in handle.read()


def test_a_relaunch_without_overrides_removes_the_earlier_overrides_record(tmp_path):
    document = {"tests": {"x": {"a": 1}}}
    root = str(tmp_path)
    run_context.record_run_config(root, config_lib.resolve_config(document, overrides={"tests.x.a": 2}))
    assert os.path.exists(os.path.join(root, "config_overrides.yaml"))
    written = run_context.record_run_config(root, config_lib.resolve_config(document))
    assert written["overrides"] == os.path.join(root, "config_overrides.yaml")
    assert not os.path.exists(os.path.join(root, "config_overrides.yaml"))
    assert yaml.safe_load(open(os.path.join(root, "config.yaml"), encoding="utf-8"))["tests"]["x"]["a"] == 1
    # and other overrides replace the record
    run_context.record_run_config(root, config_lib.resolve_config(document, overrides={"tests.x.a": 3}))
    assert yaml.safe_load(open(os.path.join(root, "config_overrides.yaml"), encoding="utf-8")) == {"tests.x.a": 3}
