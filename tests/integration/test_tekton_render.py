"""executor: tekton from the benchmark playbook: the PipelineRun and its Task are written into the
matrix directory (validated strictly), nothing runs or is post-processed here, and the play says so."""

import glob
import json
import os

import yaml

from helpers import run_playbook


def test_the_benchmark_playbook_writes_the_pipelinerun_and_runs_nothing(tmp_path):
    overrides = {"tests.benchmark.executor": "tekton", "tests.capture_environment.enabled": False,
                 "tests.benchmark.tekton.parallelism": "barrier:3", "tests.benchmark.tekton.unroll": ["dtype"],
                 "tests.benchmark.tekton.image": "registry.example.com/perfscale-topsail-ee:0.2.0",
                 "tests.benchmark.tekton.python": "/usr/bin/python3.11",
                 "tests.benchmark.tekton.collection_path":
                     "/usr/share/ansible/collections/ansible_collections/perfscale/topsail"}
    run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", json.dumps({"overrides": overrides}),
                       "-e", "artifact_dir=%s" % tmp_path)
    assert run.returncode == 0, run.output[-3000:]
    (matrix_dir,) = glob.glob(str(tmp_path / "*__matbenchmarking"))
    assert "8 point(s) rendered for tekton as %s/pipelinerun.yaml" % matrix_dir in run.flat
    with open(os.path.join(matrix_dir, "pipelinerun.yaml"), encoding="utf-8") as handle:
        pipelinerun = yaml.safe_load(handle)
    with open(os.path.join(matrix_dir, "task.yaml"), encoding="utf-8") as handle:
        task = yaml.safe_load(handle)
    assert pipelinerun["kind"] == "PipelineRun" and task["kind"] == "Task"
    step = task["spec"]["steps"][0]
    assert step["image"] == "registry.example.com/perfscale-topsail-ee:0.2.0"
    assert step["command"] == ["/usr/bin/python3.11", "-P", "/usr/share/ansible/collections/ansible_collections/perfscale/"
                               "topsail/plugins/module_utils/benchmark/tekton_point.py"]
    assert step["env"] == [{"name": "PYTHONPATH", "value": "/usr/share/ansible/collections"}]
    # nothing ran, nothing was post-processed
    assert not glob.glob(os.path.join(matrix_dir, "*", "exit_code")) and not glob.glob(str(tmp_path / "*__plots"))
