"""More of the reference's commands end to end on kubesim (OpenShift profile): cluster fill_workernodes,
update_pods_per_node, build_push_image, storage download_to_pvc and deploy_nfs_provisioner - success and failure
paths, through `ansible-playbook perfscale.topsail.toolbox`, as a user runs them."""

import glob
import os

from conftest import read

SIM_SETTINGS = dict(addons=["gpu-ready"])


def test_fill_workernodes_holds_what_each_worker_has_free(toolbox, kube, tmp_path):
    run = toolbox("cluster fill_workernodes", {"delay": 1, "timeout": 60}, tmp_path / "ok")
    assert run.returncode == 0, run.output
    placeholders = read(run.command_dir, "placeholders.json")["placeholders"]
    workers = [n["metadata"]["name"] for n in kube.get("Node")
               if "node-role.kubernetes.io/worker" in n["metadata"]["labels"]]
    assert sorted(p["node"] for p in placeholders) == sorted(workers)
    for placeholder in placeholders:
        pod = kube.get("Pod", "resource-placeholder-" + placeholder["node"], "default")
        assert pod["spec"]["nodeName"] == placeholder["node"] and pod["status"]["phase"] == "Running"
        requests = pod["spec"]["containers"][0]["resources"]["requests"]
        assert requests == {"cpu": "%dm" % placeholder["cpu_millicores"], "memory": str(placeholder["memory_bytes"])}
        assert placeholder["cpu_millicores"] > 0

    # nothing else fits on a worker now: a pod asking for 1 CPU stays Pending
    pods = kube.dynamic.resources.get(api_version="v1", kind="Pod")
    pods.create(namespace="default", body={"metadata": {"name": "latecomer"}, "spec": {
        "nodeSelector": {"node-role.kubernetes.io/worker": ""},
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}})
    import time
    time.sleep(1)
    assert kube.get("Pod", "latecomer", "default")["status"]["phase"] == "Pending"
    pods.delete(name="latecomer", namespace="default")

    # a second run replaces the placeholders (they would otherwise count as used)
    again = toolbox("cluster fill_workernodes", {"delay": 1, "timeout": 60}, tmp_path / "again")
    assert again.returncode == 0, again.output
    assert read(again.command_dir, "placeholders.json")["placeholders"] == placeholders

    nowhere = toolbox("cluster fill_workernodes", {"label_selector": "example.com/none"}, tmp_path / "nowhere")
    assert nowhere.returncode != 0
    assert "no node matches the label selector example.com/none" in read(nowhere.command_dir, "FAILURE")
    kube.dynamic.resources.get(api_version="v1", kind="Pod").delete(
        namespace="default", label_selector="perfscale.topsail/placeholder=resource-placeholder")


def test_update_pods_per_node_rolls_the_pool_and_names_a_degraded_one(toolbox, kube, tmp_path):
    run = toolbox("cluster update_pods_per_node", {"max_pods": 500, "delay": 1, "timeout": 120}, tmp_path / "ok")
    assert run.returncode == 0, run.output
    config = kube.get("KubeletConfig", "set-max-pods", api_version="machineconfiguration.openshift.io/v1")
    assert config["spec"]["kubeletConfig"] == {"maxPods": 500, "podsPerCore": 10, "podPidsLimit": 4096}
    assert read(run.command_dir, "pools.txt").startswith("worker rendered-worker-")
    assert "worker-0 pods=500" in read(run.command_dir, "nodes.txt")

    # a node that cannot apply the configuration: the machine-config daemon retries for ever, the
    # role waits its timeout and names the degraded pool
    configs = kube.dynamic.resources.get(api_version="machineconfiguration.openshift.io/v1", kind="KubeletConfig")
    configs.patch(name="set-max-pods", body={"metadata": {"annotations": {
        "kubesim.perfscale.io/degrade-node": "failed to run kubelet: invalid maxPods"}}},
        content_type="application/merge-patch+json")
    degraded = toolbox("cluster update_pods_per_node", {"max_pods": 600, "delay": 1, "timeout": 10}, tmp_path / "bad")
    assert degraded.returncode != 0
    failure = " ".join(read(degraded.command_dir, "FAILURE").split())
    assert "not ready after 10 s" in failure and "MachineConfigPool worker" in failure, failure
    assert 'Node worker-0 is reporting: "failed to run kubelet: invalid maxPods"' in failure, failure
    # a configuration the machine-config operator refuses: final at once
    configs.patch(name="set-max-pods", body={"metadata": {"annotations": {
        "kubesim.perfscale.io/degrade-node": None, "kubesim.perfscale.io/fail": "invalid maxPods 100000"}}},
        content_type="application/merge-patch+json")
    refused = toolbox("cluster update_pods_per_node", {"max_pods": 100000, "delay": 1, "timeout": 60}, tmp_path / "refused")
    assert refused.returncode != 0
    assert "KubeletConfig set-max-pods: Failure=True (Error: invalid maxPods 100000)" \
        in " ".join(read(refused.command_dir, "FAILURE").split())
    configs.delete(name="set-max-pods")

    no_pool = toolbox("cluster update_pods_per_node", {"label": "example.com/pool"}, tmp_path / "none")
    assert no_pool.returncode != 0
    assert "no MachineConfigPool has the label example.com/pool=" in read(no_pool.command_dir, "FAILURE")


def test_build_push_image_builds_to_an_imagestream_and_refuses_a_missing_dockerfile(toolbox, kube, tmp_path):
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM registry.access.redhat.com/ubi9/ubi\nRUN dnf install -y git\n")
    args = {"image_local_name": "perf-tools", "tag": "v1", "namespace": "builds", "dockerfile_path": str(dockerfile),
            "memory": "2Gi", "from_image": "quay.io/example/base:1", "delay": 1, "timeout": 120}
    run = toolbox("cluster build_push_image", args, tmp_path / "ok")
    assert run.returncode == 0, run.output
    config = kube.get("BuildConfig", "perf-tools", "builds", "build.openshift.io/v1")
    assert config["spec"]["source"] == {"type": "Dockerfile", "dockerfile": dockerfile.read_text().rstrip("\n")}
    assert config["spec"]["strategy"]["dockerStrategy"]["from"] == {"kind": "DockerImage", "name": "quay.io/example/base:1"}
    assert config["spec"]["output"]["to"] == {"kind": "ImageStreamTag", "name": "perf-tools:v1"}
    stream = kube.get("ImageStream", "perf-tools", "builds", "image.openshift.io/v1")
    assert [t["tag"] for t in stream["status"]["tags"]] == ["v1"]
    assert read(run.command_dir, "image.txt").strip().endswith("@" + stream["status"]["tags"][0]["items"][0]["image"])
    assert "Push successful" in read(run.command_dir, "build.log")

    # a second run replaces the BuildConfig: a fresh build 1, built again
    again = toolbox("cluster build_push_image", dict(args, git_repo="https://github.com/example/perf-tools",
                                                     git_ref="main", context_dir="/images/tools"), tmp_path / "git")
    assert again.returncode == 0, again.output
    source = kube.get("BuildConfig", "perf-tools", "builds", "build.openshift.io/v1")["spec"]["source"]
    assert source == {"type": "Git", "git": {"uri": "https://github.com/example/perf-tools", "ref": "main"},
                      "contextDir": "/images/tools"}

    missing = toolbox("cluster build_push_image", dict(args, dockerfile_path=str(tmp_path / "no-Dockerfile")),
                      tmp_path / "missing")
    assert missing.returncode != 0
    assert "dockerfile_path %s: no such file" % (tmp_path / "no-Dockerfile") in " ".join(
        read(missing.command_dir, "FAILURE").split())


def test_download_to_pvc_creates_the_claim_runs_the_job_and_reports_a_failure(toolbox, kube, sim, tmp_path):
    kube.dynamic.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": "models"}})
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    token = "hf_%s" % os.urandom(10).hex()
    (secrets / "hf-token").write_text(token)
    args = {"name": "granite-3b", "source": "hf://ibm-granite/granite-3.0-3b-a800m-instruct", "pvc_name": "models",
            "namespace": "models", "creds": "secret:hf-token", "pvc_size": "20Gi", "delay": 1, "timeout": 120}
    # the reference's documents' other name for the command
    run = toolbox("cluster download_to_pvc", args, tmp_path / "ok", env={"PERFSCALE_SECRETS_DIR": str(secrets)})
    assert run.returncode == 0, run.output
    run.command_dir = glob.glob(str(tmp_path / "ok" / "[0-9][0-9][0-9]__storage__download_to_pvc"))[0]
    pvc = kube.get("PersistentVolumeClaim", "models", "models")
    assert pvc["status"]["phase"] == "Bound" and pvc["spec"]["resources"]["requests"]["storage"] == "20Gi"
    job = kube.get("Job", "download-granite-3b", "models", "batch/v1")
    assert any(c["type"] == "Complete" and c["status"] == "True" for c in job["status"]["conditions"])
    assert read(run.command_dir, "pvc.txt").split()[0] == "models/models"
    assert "path=/granite-3b" in read(run.command_dir, "pvc.txt")
    assert token not in run.output
    for root, _dirs, files in os.walk(tmp_path / "ok"):
        for name in files:
            with open(os.path.join(root, name), "rb") as handle:
                assert token.encode() not in handle.read(), name

    sim.faults.add("controller", controller="pods", match={"namespace": "models"}, message="curl: (22) 404 Not Found")
    try:
        failed = toolbox("storage download_to_pvc", dict(args, source="https://example.com/missing.tar.gz", creds=""),
                         tmp_path / "failed")
    finally:
        sim.faults.remove()
    assert failed.returncode != 0
    failure = " ".join(read(failed.command_dir, "FAILURE").split())
    assert "Job models/download-granite-3b: Failed=True (BackoffLimitExceeded: " in failure, failure
    assert "(exit code 1: curl: (22) 404 Not Found)" in failure, failure

    bad = toolbox("storage download_to_pvc", dict(args, source="ftp://example.com/x"), tmp_path / "bad")
    assert bad.returncode != 0
    assert "source ftp://example.com/x: expected an http(s)://, s3:// or hf:// address" in " ".join(
        read(bad.command_dir, "FAILURE").split())


def test_deploy_nfs_provisioner_serves_a_default_class(toolbox, kube, tmp_path):
    run = toolbox("storage deploy_nfs_provisioner", {"pvc_size": "10Gi", "default_sc": True, "timeout": 60}, tmp_path / "ok")
    assert run.returncode == 0, run.output
    classes = {sc["metadata"]["name"]: sc for sc in kube.get("StorageClass", api_version="storage.k8s.io/v1")}
    default = [name for name, sc in classes.items()
               if (sc["metadata"].get("annotations") or {}).get("storageclass.kubernetes.io/is-default-class") == "true"]
    assert default == ["nfs-provisioner"]
    assert classes["nfs-provisioner"]["provisioner"] == "nfs.perfscale.topsail/nfs-provisioner"
    assert kube.get("PersistentVolumeClaim", "nfs-provisioner-export", "nfs-provisioner")["status"]["phase"] == "Bound"
    assert "nfs-provisioner nfs.perfscale.topsail/nfs-provisioner default=true" in read(run.command_dir, "storageclasses.txt")

    missing = toolbox("storage deploy_nfs_provisioner", {"pvc_sc": "gp9"}, tmp_path / "missing")
    assert missing.returncode != 0
    assert "pvc_sc gp9: no such StorageClass" in read(missing.command_dir, "FAILURE")
