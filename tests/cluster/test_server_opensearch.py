"""server deploy_opensearch on kubesim: the Secret from a properties file (its password never in the task output
nor the artifacts), the StatefulSet with its data PVC and the Service, and the overrides that send the results
store there (valid export settings); a weak or missing password is one line."""

import base64
import os

import yaml

from conftest import read
from helpers import grep_tree

from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as export_lib

SIM_SETTINGS = dict(profile="vanilla", time_scale=20, pod_start_delay=0)
PASSWORD = "Op3nS-earch!9b2"


def test_opensearch_is_deployed_and_the_results_store_can_be_sent_there(toolbox, kube, tmp_path):
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "opensearch.properties").write_text("admin_password=%s\n" % PASSWORD)
    args = {"secret_properties_file": "secret:opensearch.properties", "namespace": "results", "name": "kpis"}
    run = toolbox("server deploy_opensearch", args, tmp_path / "run", env={"PERFSCALE_SECRETS_DIR": str(secrets)})
    assert run.returncode == 0, run.output
    assert read(run.command_dir, "opensearch_server.txt").startswith("endpoint: https://kpis.results.svc:9200\n")
    secret = kube.get("Secret", "kpis-secret", "results", api_version="v1")
    assert base64.b64decode(secret["data"]["admin_password"]).decode() == PASSWORD
    statefulset = kube.get("StatefulSet", "kpis", "results", api_version="apps/v1")
    assert statefulset["status"]["readyReplicas"] == 1
    claim = kube.get("PersistentVolumeClaim", "data-kpis-0", "results", api_version="v1")
    assert claim["spec"]["resources"]["requests"]["storage"] == "10Gi"
    assert kube.get("Service", "kpis", "results", api_version="v1")["spec"]["ports"][0]["port"] == 9200
    assert PASSWORD not in run.output
    assert grep_tree(str(tmp_path / "run"), PASSWORD) == []
    # the overrides it wrote are the export section's keys, and validate as such
    overrides = yaml.safe_load(read(run.command_dir, "export_overrides.yaml"))
    shipped = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "config", "config.yaml")
    config = config_lib.resolve_config(shipped, overrides=overrides).config
    export = export_lib.read_export(config)
    assert export["backend"] == "opensearch" and export["opensearch"]["hosts"] == ["https://kpis.results.svc:9200"]

    # again: the same objects, updated in place (not made twice, not recreated), the data volume kept
    again = toolbox("server deploy_opensearch", args, tmp_path / "again", env={"PERFSCALE_SECRETS_DIR": str(secrets)})
    assert again.returncode == 0, again.output
    assert kube.get("StatefulSet", "kpis", "results", api_version="apps/v1")["metadata"]["uid"] == \
        statefulset["metadata"]["uid"]
    assert kube.get("PersistentVolumeClaim", "data-kpis-0", "results", api_version="v1")["metadata"]["uid"] == \
        claim["metadata"]["uid"]
    assert [s["metadata"]["name"] for s in kube.get("StatefulSet", namespace="results", api_version="apps/v1")] == ["kpis"]


def test_a_missing_or_weak_password_is_one_line(toolbox, tmp_path):
    properties = tmp_path / "opensearch.properties"
    properties.write_text("user_password=x\n")
    run = toolbox("server deploy_opensearch", {"secret_properties_file": str(properties)}, tmp_path / "a")
    assert run.returncode != 0 and "expected a line admin_password=..." in read(run.command_dir, "FAILURE")
    properties.write_text("admin_password=admin\n")
    run = toolbox("server deploy_opensearch", {"secret_properties_file": str(properties)}, tmp_path / "b")
    assert run.returncode != 0 and "admin_password is too weak for OpenSearch" in read(run.command_dir, "FAILURE")
