"""`make demo-flows` from the shell: tools/demo_flows.py starts its own kubesim and model server and
runs a flow the way a user does (the flow's behaviour itself is tested in test_flow_*.py)."""

import glob
import json
import os
import subprocess
import sys

from conftest import read

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def test_the_fine_tuning_flow_runs_from_the_shell_on_its_own_kubesim(tmp_path):
    overrides = {"tests.fine_tuning.benchmark.matrix.factors.dataset_replication": [1]}
    env = dict(os.environ, ARTIFACTS=str(tmp_path), FLOWS="fine_tuning", XDG_DATA_HOME=str(tmp_path / "data"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    env.pop("KUBECONFIG", None)
    done = subprocess.run([sys.executable, os.path.join(REPO, "tools", "demo_flows.py"), "-e",
                           json.dumps({"overrides": overrides})], env=env, cwd=REPO, capture_output=True, text=True,
                          timeout=900, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "demo-flows: fine_tuning artifacts: %s" % (tmp_path / "fine_tuning") in output
    flow = read(tmp_path / "fine_tuning", "flow.json")
    assert flow["outcomes"] == {"cleanup_before": "ok", "prepare": "ok", "test": "ok", "cleanup_after": "ok"}, flow
    # the dataset was downloaded to its PVC (the step that failed from the shell before) and the point ran
    assert glob.glob(str(tmp_path / "fine_tuning" / "*__storage__download_to_pvc_fine_tuning_dataset"))
    point = glob.glob(str(tmp_path / "fine_tuning" / "*__fine_tuning" / "*__x1"))[0]
    assert read(point, "output.json")["@result"]["train_samples_per_second"] == 12.4
    assert "FAILURE" not in os.listdir(point)
