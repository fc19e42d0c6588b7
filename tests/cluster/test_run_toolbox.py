"""run_toolbox.py, the reference's command line, against kubesim: the same command directory, files
and parameters as the playbook form."""

import yaml

from helpers import run_playbook, run_toolbox, tree

SIM_SETTINGS = dict(profile="vanilla")


def test_capture_state_from_the_reference_command_line_has_the_playbook_form_s_layout(sim, kube, tmp_path):
    kube.dynamic.resources.get(api_version="v1", kind="Namespace").create(
        body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "my-ns"}})
    kube.dynamic.resources.get(api_version="v1", kind="ConfigMap").create(
        namespace="my-ns", body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}})
    env = {"KUBECONFIG": sim.kubeconfig}
    cli = run_toolbox("cluster", "capture_state", "--namespaces=my-ns", "--kinds", "ConfigMap,Pod",
                      env=dict(env, ARTIFACT_DIR=str(tmp_path / "cli")))
    assert cli.returncode == 0, cli.output
    assert "[WARNING]" not in cli.output, cli.output
    playbook = run_playbook("perfscale.topsail.toolbox", "-e", "command='cluster capture_state'",
                            "-e", "namespaces=my-ns", "-e", "kinds=ConfigMap,Pod",
                            "-e", "artifact_dir=%s" % (tmp_path / "playbook"), env=env)
    assert playbook.returncode == 0, playbook.output
    files = tree(str(tmp_path / "cli"))
    assert "000__cluster__capture_state/my-ns/configmap.yaml" in files, files
    assert files == tree(str(tmp_path / "playbook"))
    params = [yaml.safe_load((tmp_path / form / "000__cluster__capture_state" / "_params.yaml").read_text())
              for form in ("cli", "playbook")]
    assert params[0] == params[1]
    assert params[0]["namespaces"] == ["my-ns"] and params[0]["kinds"] == ["ConfigMap", "Pod"]
    captured = yaml.safe_load((tmp_path / "cli" / "000__cluster__capture_state" / "my-ns" / "configmap.yaml")
                              .read_text())
    assert [item["metadata"]["name"] for item in captured] == ["c"]
