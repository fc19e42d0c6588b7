"""The reference's rhods commands end to end on kubesim (OpenShift profile): OpenShift AI from a catalog image
through OLM (an image no registry serves refused in one line), the DataScienceCluster's components (a misspelt
extra setting refused before anything is sent), the waits, the state capture, and the removal in order."""

from conftest import read

SIM_SETTINGS = dict(addons=[])


def test_openshift_ai_from_a_catalog_image_to_its_removal(toolbox, kube, tmp_path):
    unknown = toolbox("rhods deploy_ods", {"catalog_image": "quay.io/nowhere/catalog", "tag": "v1", "timeout": 20},
                      tmp_path / "unknown")
    assert unknown.returncode != 0
    failure = " ".join(read(unknown.command_dir, "FAILURE").split())
    assert "catalog quay.io/nowhere/catalog:v1: not ready after 20 s; last state: CatalogSource " \
           "openshift-marketplace/rhoai-catalog-dev: connection TRANSIENT_FAILURE; registry Pod " in failure, failure
    assert "ImagePullBackOff" in failure or "ErrImagePull" in failure, failure
    assert "CatalogSource/rhoai-catalog-dev -n openshift-marketplace: connection=TRANSIENT_FAILURE" in failure, failure

    deployed = toolbox("rhods deploy_ods", {"catalog_image": "quay.io/rhoai/rhoai-fbc-fragment", "tag": "rhoai-2.22",
                                            "channel": "stable", "managed_rhoai": False}, tmp_path / "deploy")
    assert deployed.returncode == 0, deployed.output
    assert "managed_rhoai is the reference's managed/self-managed switch" in deployed.output
    csv = kube.get("ClusterServiceVersion", "rhods-operator.2.22.2", "redhat-ods-operator", "operators.coreos.com/v1alpha1")
    assert csv["status"]["phase"] == "Succeeded"

    misspelt = toolbox("rhods update_datasciencecluster",
                       {"enable": ["dashboard"], "extra_settings": {"spec.components.kserve.servingg.managementState": "Removed"}},
                       tmp_path / "misspelt")
    assert misspelt.returncode != 0
    failure = " ".join(read(misspelt.command_dir, "FAILURE").split())
    assert "DataScienceCluster default-dsc: spec.components.kserve.servingg: unknown field" in failure
    assert kube.get("DataScienceCluster", api_version="datasciencecluster.opendatahub.io/v1") == []   # nothing sent

    updated = toolbox("rhods update_datasciencecluster", {"enable": ["dashboard", "kueue", "trainingoperator"],
                                                          "delay": 1, "timeout": 120}, tmp_path / "update")
    assert updated.returncode == 0, updated.output
    components = dict(line.split() for line in read(updated.command_dir, "components.txt").splitlines())
    assert components["dashboard"] == components["kueue"] == components["trainingoperator"] == "Managed"
    assert components["kserve"] == components["ray"] == "Removed"
    dsc = kube.get("DataScienceCluster", "default-dsc", api_version="datasciencecluster.opendatahub.io/v1")
    assert dsc["spec"]["components"]["kserve"]["serving"]["managementState"] == "Removed"   # the default extra setting
    assert dsc["status"]["phase"] == "Ready"

    waited = toolbox("rhods wait_ods", {"delay": 1, "timeout": 120}, tmp_path / "wait")
    assert waited.returncode == 0, waited.output
    assert "kubeflow-training-operator" in read(waited.command_dir, "deployments.txt").split()
    odh = toolbox("rhods wait_odh", {"delay": 1, "timeout": 3}, tmp_path / "odh")
    assert odh.returncode != 0   # the Open Data Hub namespace has nothing in this cluster
    assert "not ready after 3 s; last state: Deployments -n opendatahub: 0 of at least 1 exist (is the platform " \
           "deployed in opendatahub?)" in read(odh.command_dir, "FAILURE")
    state = toolbox("rhods capture_state", {}, tmp_path / "state")
    assert state.returncode == 0, state.output
    assert "rhods-operator.2.22.2 Succeeded" in read(state.command_dir, "csvs.txt")

    deleted = toolbox("rhods delete_ods", {}, tmp_path / "delete")
    assert deleted.returncode == 0, deleted.output
    assert kube.get("Namespace", "redhat-ods-applications") is None and kube.get("Namespace", "redhat-ods-operator") is None
