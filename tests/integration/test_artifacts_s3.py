"""Artifacts to S3-compatible storage and back: a benchmark run uploads its tree (export_artifacts),
download.yml brings it back in each mode and replots it. The store is moto's S3 server on 127.0.0.1
checking credentials as S3 does; a proxy that dies mid-upload stands for a store that fails."""

import glob
import json
import os
import shutil
import sqlite3
import sys

import pytest

from helpers import REPO, grep_tree, run_playbook, tree

sys.path.insert(0, os.path.join(REPO, "tests"))
import s3_server  # noqa: E402  pylint: disable=wrong-import-position
from proxy import Proxy  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import artifact_transfer  # noqa: E402

pytestmark = pytest.mark.skipif(not s3_server.available(), reason="moto's S3 server is not installed in "
                                                                  ".venv/s3-server (make setup-test installs it)")
BUCKET = "perf-results"
# two points: enough for a tree with a matrix, parse caches and reports
MATRIX = {"factors": {"indicator": "matmul", "size": [64, 96], "dtype": "float32"},
          "common_settings": {"backend": "numpy", "reps": 3, "warmup": 1}}


SECRET = "Bucket-Secret-7c41+e9/Qz"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A server that takes the credentials without checking them. (moto's authenticating mode
    mis-signs a query holding "/" - boto3's ListObjectsV2 with such a prefix fails there too - so the
    flows run here and the credentials are checked on ``auth_store``.)"""
    with s3_server.running("perfscale", SECRET, buckets=[BUCKET]) as (url, client):
        secrets = tmp_path_factory.mktemp("secrets")
        (secrets / "s3.yaml").write_text("access_key_id: perfscale\nsecret_access_key: %s\n" % SECRET)
        yield {"url": url, "client": client, "secret": SECRET, "secrets_dir": str(secrets)}


@pytest.fixture(scope="module")
def auth_store(tmp_path_factory):
    """A server that checks credentials as S3 does, knowing one user."""
    with s3_server.authenticating(buckets=[BUCKET]) as (url, client, access_key, secret_key):
        secrets = tmp_path_factory.mktemp("auth-secrets")
        (secrets / "s3.yaml").write_text("access_key_id: %s\nsecret_access_key: %s\n" % (access_key, secret_key))
        (secrets / "wrong-secret.yaml").write_text(
            "access_key_id: %s\nsecret_access_key: Not-The-Secret-4f1e\n" % access_key)
        (secrets / "wrong-key.yaml").write_text("access_key_id: AKIANOSUCHKEY\nsecret_access_key: Not-The-Secret-4f1e\n")
        yield {"url": url, "client": client, "secret": secret_key, "secrets_dir": str(secrets)}


def overrides(store, endpoint=None, credentials="s3.yaml", **extra):
    values = {"export_artifacts.enabled": True, "export_artifacts.bucket": BUCKET, "export_artifacts.path_prefix": "ci",
              "export_artifacts.endpoint_url": endpoint or store["url"], "export_artifacts.credentials_file": credentials,
              "export_artifacts.parallel": 1}
    values.update(extra)
    return "overrides=%s" % json.dumps(values)


def env(store, data_dir):
    return {"PERFSCALE_SECRETS_DIR": store["secrets_dir"], "XDG_DATA_HOME": str(data_dir)}


def read_json(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def exported_run(store, tmp_path_factory):
    base = tmp_path_factory.mktemp("exported")
    root = base / "run"
    run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % root,
                       "-e", overrides(store, **{"tests.benchmark.matrix": MATRIX,
                                                 "export.sqlite.path": str(base / "results.sqlite")}),
                       env=env(store, base / "data"))
    assert run.returncode == 0, run.output
    return {"root": str(root), "run": run, "store_file": str(base / "results.sqlite"),
            "url": read_json(str(root / "run.json"))["artifacts_url"]}


def test_the_run_uploads_its_tree_and_records_where(store, exported_run):
    root, url = exported_run["root"], exported_run["url"]
    info = read_json(os.path.join(root, "run.json"))
    assert url == "s3://%s/ci/run-%s" % (BUCKET, info["run_id"][:8])
    record = read_json(os.path.join(root, artifact_transfer.EXPORT_RECORD))
    assert record["complete"] and not record["failed"] and record["uploaded"] == record["files"] > 10
    assert "Exported artifacts: artifacts at %s" % url in exported_run["run"].flat
    prefix = "ci/run-%s/" % info["run_id"][:8]
    remote = store["client"].list_objects(BUCKET, prefix)
    local = set(artifact_transfer.local_files(root))
    assert {key[len(prefix):] for key in remote} == local | {artifact_transfer.MANIFEST_NAME}
    assert any(path.endswith(".perfscale_parse_cache.json") for path in local)
    # every exported KPI document links to the run's artifacts
    with sqlite3.connect(exported_run["store_file"]) as connection:
        documents = [json.loads(row[0]) for row in connection.execute("SELECT document FROM documents WHERE kind='kpi'")]
    assert documents and {document["artifacts_url"] for document in documents} == {url}
    # the secret went nowhere
    assert grep_tree(root, store["secret"]) == []
    assert store["secret"] not in exported_run["run"].output


def kpis_by_test(plots_dir):
    """{(test, KPI): (value, the run's artifacts URL)} of a post-processing."""
    return {(record["test_uuid"], record["kpi_name"]): (record["value"], record["artifacts_url"])
            for record in read_json(os.path.join(plots_dir, "kpi_records.json"))}


def downloaded_bytes(dest):
    """Bytes of a downloaded tree, without the replot's plots directory and the download record."""
    replot = os.path.basename(only_plots_dir(dest)) + "/"
    return sum(os.path.getsize(os.path.join(dest, path)) for path in tree(dest)
               if not path.startswith(replot) and path != artifact_transfer.DOWNLOAD_RECORD)


def only_plots_dir(root):
    found = sorted(glob.glob(os.path.join(root, "*__plots")))
    return found[-1]


def test_download_modes_fetch_what_they_promise_and_the_replot_matches(store, exported_run, tmp_path):
    root, url = exported_run["root"], exported_run["url"]
    original = kpis_by_test(only_plots_dir(root))
    assert original and {url} == {link for _value, link in original.values()}
    moved = {}
    for mode in ("prefer_cache", "important", "all"):
        dest = tmp_path / mode
        run = run_playbook("playbooks/download.yml", "-e", "url=%s" % url, "-e", "artifact_dir=%s" % dest,
                           "-e", "mode=%s" % mode, "-e", overrides(store), env=env(store, tmp_path / "data"))
        assert run.returncode == 0, run.output
        summary = read_json(str(dest / artifact_transfer.DOWNLOAD_RECORD))
        assert summary["complete"] and summary["url"] == url
        moved[mode] = downloaded_bytes(str(dest))
        # important leaves the parse caches in the bucket: its tests are parsed again
        from_cache = 0 if mode == "important" else 2
        assert "2 test(s) (0 failed, %d from cache)" % from_cache in run.flat, run.output
        # the replot has the KPIs of the original (the newest plots directory is the replot's)
        assert kpis_by_test(only_plots_dir(str(dest))) == original
        assert grep_tree(str(dest), store["secret"]) == [] and store["secret"] not in run.output
    # all: the same files as the original tree
    uploaded = set(artifact_transfer.local_files(root))
    assert uploaded <= set(tree(str(tmp_path / "all")))
    assert moved["prefer_cache"] < moved["all"] and moved["important"] < moved["all"]
    # prefer_cache left the point's outputs in the bucket
    assert not glob.glob(str(tmp_path / "prefer_cache" / "*__matbenchmarking" / "*" / "output.json"))
    assert glob.glob(str(tmp_path / "important" / "*__matbenchmarking" / "*" / "output.json"))


def test_save_to_artifacts_downloads_into_the_ci_job_s_own_artifacts(store, exported_run, tmp_path):
    job = tmp_path / "ci-job-artifacts"
    run = run_playbook("playbooks/download.yml", "-e", "url=%s" % exported_run["url"], "-e", "save_to_artifacts=true",
                       "-e", "visualize=false", "-e", overrides(store),
                       env=dict(env(store, tmp_path / "data"), ARTIFACT_DIR=str(job)))
    assert run.returncode == 0, run.output
    assert read_json(str(job / "downloaded" / artifact_transfer.DOWNLOAD_RECORD))["complete"]
    both = run_playbook("playbooks/download.yml", "-e", "url=%s" % exported_run["url"], "-e", "save_to_artifacts=true",
                        "-e", "artifact_dir=%s" % (tmp_path / "x"), "-e", overrides(store), env=env(store, tmp_path / "data"))
    assert both.returncode != 0 and "one of -e artifact_dir=PATH and -e save_to_artifacts=true" in both.flat
    nowhere = run_playbook("playbooks/download.yml", "-e", "url=%s" % exported_run["url"], "-e", "save_to_artifacts=true",
                           "-e", overrides(store), env=dict(env(store, tmp_path / "data"), ARTIFACT_DIR=""))
    assert nowhere.returncode != 0 and "save_to_artifacts=true needs the environment variable ARTIFACT_DIR" in nowhere.flat


def test_a_stale_cache_falls_back_to_the_important_files(store, exported_run, tmp_path, monkeypatch):
    """A cache parsed by other workload code is stale: that test's important files are downloaded."""
    from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload
    from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree

    monkeypatch.setattr(results_tree, "workload_fingerprint", lambda _workload: "newer parser")
    summary = artifact_transfer.download_tree(store["client"], exported_run["url"], str(tmp_path / "dl"),
                                              "prefer_cache", workload.load_workload("perf_indicators"))
    assert "2 test(s) without a usable parse cache" in summary["notes"][0]
    assert len(glob.glob(str(tmp_path / "dl" / "*__matbenchmarking" / "*" / "output.json"))) == 2


def test_an_upload_cut_mid_way_is_resumed_and_only_what_is_missing_is_sent(store, exported_run, tmp_path):
    root = tmp_path / "cut"
    shutil.copytree(exported_run["root"], root)
    for name in (artifact_transfer.EXPORT_RECORD, artifact_transfer.LOCAL_MANIFEST):
        os.unlink(root / name)
    size = sum(os.path.getsize(path) for path in artifact_transfer.local_files(str(root)).values())
    port = int(store["url"].rsplit(":", 1)[1])
    proxy = Proxy(port, cut_after_bytes=size // 2).start()
    try:
        cut = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % root,
                           "-e", overrides(store, endpoint=proxy.url, **{"tests.benchmark.matrix": MATRIX}),
                           env=env(store, tmp_path / "data"))
    finally:
        proxy.stop()
    # the test's verdict stands (fail_test_on_fail is false); the warning says what happened
    assert cut.returncode == 0, cut.output
    assert "artifacts not (fully) exported to" in cut.flat and "re-run to upload what is missing" in cut.flat
    record = read_json(str(root / artifact_transfer.EXPORT_RECORD))
    assert not record["complete"] and record["failed"]
    url = read_json(str(root / "run.json"))["artifacts_url"]
    prefix = url[len("s3://%s/" % BUCKET):] + "/"
    remote = store["client"].list_objects(BUCKET, prefix)
    assert remote and prefix + artifact_transfer.MANIFEST_NAME not in remote
    # a download refuses the incomplete upload
    refused = artifact_transfer.download_tree
    with pytest.raises(artifact_transfer.TransferError, match="no complete upload there"):
        refused(store["client"], url, str(tmp_path / "early"), "all", None)
    # ... and a re-run sends the rest only
    again = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % root,
                         "-e", overrides(store, **{"tests.benchmark.matrix": MATRIX}), env=env(store, tmp_path / "data"))
    assert again.returncode == 0, again.output
    record = read_json(str(root / artifact_transfer.EXPORT_RECORD))
    assert record["complete"], record
    assert record["already_there"] >= len(remote) - 1 and record["uploaded"] >= 1
    assert record["uploaded"] + record["already_there"] == record["files"]


def test_a_failed_upload_fails_the_test_when_asked(store, exported_run, tmp_path):
    root = tmp_path / "asked"
    shutil.copytree(exported_run["root"], root)
    run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % root,
                       "-e", overrides(store, endpoint="http://127.0.0.1:9", **{
                           "tests.benchmark.matrix": MATRIX, "export_artifacts.fail_test_on_fail": True,
                           "export_artifacts.timeout_s": 2}),
                       env=env(store, tmp_path / "data"))
    assert run.returncode != 0
    assert "artifacts not (fully) exported to s3://%s/ci/asked-" % BUCKET in run.flat


def test_wrong_credentials_are_one_line_and_nothing_is_written(auth_store, exported_run, tmp_path):
    # the right credentials read an object (the store does check them)...
    auth_store["client"].put_object(BUCKET, "ci/x/" + artifact_transfer.MANIFEST_NAME, b'{"files": {}}')
    assert artifact_transfer.read_manifest(auth_store["client"], "s3://%s/ci/x" % BUCKET) == {"files": {}}
    # ... an unknown key uploads nothing
    root = tmp_path / "wrong"
    shutil.copytree(exported_run["root"], root)
    upload = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % root,
                          "-e", overrides(auth_store, credentials="wrong-key.yaml", **{"tests.benchmark.matrix": MATRIX}),
                          env=env(auth_store, tmp_path / "data"))
    assert upload.returncode == 0, upload.output
    assert "403 InvalidAccessKeyId" in upload.flat
    assert not json.loads(open(root / artifact_transfer.EXPORT_RECORD, encoding="utf-8").read())["complete"]
    # ... a wrong secret downloads nothing
    dest = tmp_path / "download"
    download = run_playbook("playbooks/download.yml", "-e", "url=s3://%s/ci/x" % BUCKET,
                            "-e", "artifact_dir=%s" % dest, "-e", overrides(auth_store, credentials="wrong-secret.yaml"),
                            env=env(auth_store, tmp_path / "data"))
    assert download.returncode != 0
    assert "url s3://%s/ci/x: GET %s/ci/x/%s: 403 SignatureDoesNotMatch" % (
        BUCKET, BUCKET, artifact_transfer.MANIFEST_NAME) in download.flat, download.output
    assert not dest.exists()
    for text in (upload.output, download.output):
        assert "Not-The-Secret-4f1e" not in text and auth_store["secret"] not in text
    assert grep_tree(str(root), "Not-The-Secret-4f1e") == [] and grep_tree(str(root), auth_store["secret"]) == []


@pytest.mark.parametrize("arguments, message", [
    (["-e", "url=http://bucket/x"], "url 'http://bucket/x': expected s3://bucket/prefix"),
    (["-e", "url=s3://%s/ci/nothing-here" % BUCKET], "no complete upload there"),
    (["-e", "url=s3://%s/ci/x" % BUCKET, "-e", "mode=some"], "optionally -e mode=prefer_cache|important|all (got mode=some)"),
    ([], "download: expected -e url=s3://bucket/prefix (or -e url_file=PATH)"),
])
def test_download_refuses_bad_input_in_one_line(store, tmp_path, arguments, message):
    dest = tmp_path / "dest"
    run = run_playbook("playbooks/download.yml", "-e", "artifact_dir=%s" % dest, "-e", overrides(store), *arguments,
                       env=env(store, tmp_path / "data"))
    assert run.returncode != 0
    assert message in run.flat, run.output
    assert not dest.exists() or not os.listdir(dest)


def test_download_into_a_directory_holding_something_else_is_refused(store, exported_run, tmp_path):
    dest = tmp_path / "busy"
    dest.mkdir()
    (dest / "mine.txt").write_text("keep me\n")
    url_file = tmp_path / "url.txt"
    url_file.write_text("\n%s\n" % exported_run["url"])
    run = run_playbook("playbooks/download.yml", "-e", "url_file=%s" % url_file, "-e", "artifact_dir=%s" % dest,
                       "-e", overrides(store), env=env(store, tmp_path / "data"))
    assert run.returncode != 0
    assert "artifact_dir %s: not empty and not a download of %s" % (dest, exported_run["url"]) in run.flat
    # nothing of the run was written there, the user's file is intact
    assert not (dest / "run.json").exists() and not (dest / artifact_transfer.DOWNLOAD_RECORD).exists()
    assert (dest / "mine.txt").read_text() == "keep me\n"


def test_large_files_go_in_parts_and_their_etag_is_the_stores(store, tmp_path):
    """Against the real server: a 12 MiB file in three 5 MiB parts; the store's ETag of a multipart
    upload is the one computed locally, so a second upload sends nothing, and the download checks out."""
    root = tmp_path / "big"
    root.mkdir()
    data = os.urandom(12 * 1024 * 1024 + 3)
    (root / "trace.bin").write_bytes(data)
    (root / "run.json").write_text('{"run_id": "0123456789"}')
    url = "s3://%s/ci/big-01234567" % BUCKET
    first = artifact_transfer.upload_tree(store["client"], str(root), url, "0123456789", part_size=5 * 1024 * 1024)
    assert first["complete"] and first["uploaded"] == 2, first
    remote = store["client"].list_objects(BUCKET, "ci/big-01234567/")
    assert remote["ci/big-01234567/trace.bin"]["etag"].endswith("-3")
    os.unlink(root / artifact_transfer.LOCAL_MANIFEST)  # hashes computed again, compared with the store's
    again = artifact_transfer.upload_tree(store["client"], str(root), url, "0123456789", part_size=5 * 1024 * 1024)
    assert again["complete"] and again["uploaded"] == 0 and again["already_there"] == 2
    summary = artifact_transfer.download_tree(store["client"], url, str(tmp_path / "back"), "all", None)
    assert summary["downloaded"] == 2 and (tmp_path / "back" / "trace.bin").read_bytes() == data


def test_the_regression_report_of_a_later_run_names_where_the_earlier_runs_files_are(store, exported_run, tmp_path):
    root = tmp_path / "later"
    run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % root,
                       "-e", overrides(store, **{"tests.benchmark.matrix": MATRIX,
                                                 "export.sqlite.path": exported_run["store_file"],
                                                 # two points of a few milliseconds are noisy: kept as history here
                                                 "regression.noise.baseline": "all"}),
                       env=env(store, tmp_path / "data"))
    assert run.returncode == 0, run.output
    report = (root / os.path.basename(only_plots_dir(str(root))) / "regression_report.html").read_text()
    assert "<th>artifacts</th>" in report and exported_run["url"] in report
