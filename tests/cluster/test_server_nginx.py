"""server deploy_nginx_server on kubesim: a directory's files (text and binary) served as they are from a
ConfigMap by an nginx Deployment and its Service; a directory without files or too large is one line before
anything reaches the cluster."""

import base64

from conftest import read

SIM_SETTINGS = dict(profile="vanilla", time_scale=20, pod_start_delay=0)


def test_a_directory_is_served_by_nginx(toolbox, kube, tmp_path):
    content = tmp_path / "content"
    content.mkdir()
    (content / "index.html").write_text("<h1>models</h1>\n")
    (content / "weights.bin").write_bytes(bytes(range(256)))
    (content / "nested").mkdir()
    (content / "nested" / "ignored.txt").write_text("not a top-level file\n")
    run = toolbox("server deploy_nginx_server", {"namespace": "files", "directory": str(content)}, tmp_path / "run")
    assert run.returncode == 0, run.output
    assert read(run.command_dir, "nginx_server.txt") == "http://nginx.files.svc:8080/\n"
    assert read(run.command_dir, "served_files.json") == ["index.html", "weights.bin"]
    config_map = kube.get("ConfigMap", "nginx-content", "files", api_version="v1")
    assert base64.b64decode(config_map["binaryData"]["weights.bin"]) == bytes(range(256))
    assert base64.b64decode(config_map["binaryData"]["index.html"]) == b"<h1>models</h1>\n"
    deployment = kube.get("Deployment", "nginx", "files", api_version="apps/v1")
    assert deployment["status"]["availableReplicas"] == 1
    volume = deployment["spec"]["template"]["spec"]["volumes"][0]
    assert volume["configMap"]["name"] == "nginx-content"
    assert kube.get("Service", "nginx", "files", api_version="v1")["spec"]["ports"][0]["port"] == 8080

    # again with other files: the ConfigMap holds the new set, the Deployment is the same one
    (content / "weights.bin").unlink()
    (content / "index.html").write_text("<h1>models v2</h1>\n")
    again = toolbox("server deploy_nginx_server", {"namespace": "files", "directory": str(content)}, tmp_path / "again")
    assert again.returncode == 0, again.output
    config_map = kube.get("ConfigMap", "nginx-content", "files", api_version="v1")
    assert sorted(config_map["binaryData"]) == ["index.html"]
    assert base64.b64decode(config_map["binaryData"]["index.html"]) == b"<h1>models v2</h1>\n"
    assert kube.get("Deployment", "nginx", "files", api_version="apps/v1")["metadata"]["uid"] == deployment["metadata"]["uid"]


def test_an_empty_or_too_large_directory_is_one_line(toolbox, kube, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    run = toolbox("server deploy_nginx_server", {"namespace": "nothing", "directory": str(empty)}, tmp_path / "a")
    assert run.returncode != 0
    assert "directory %s must hold at least one file and at most 1000000 bytes in all" % empty in read(
        run.command_dir, "FAILURE")
    big = tmp_path / "big"
    big.mkdir()
    (big / "blob").write_bytes(b"x" * 1100000)
    run = toolbox("server deploy_nginx_server", {"namespace": "nothing", "directory": str(big)}, tmp_path / "b")
    assert run.returncode != 0 and "it holds 1 file(s) of 1100000 bytes" in read(run.command_dir, "FAILURE")
    assert kube.get("Namespace", "nothing", api_version="v1") in (None, [])
