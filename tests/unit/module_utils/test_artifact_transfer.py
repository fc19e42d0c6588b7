"""Artifact transfer to S3 and back, against an in-memory store that answers as S3 does (ETags of
single and multipart uploads); the real server is exercised in tests/integration/test_artifacts_s3.py."""

import hashlib
import json
import os
import sys

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import artifact_transfer as transfer
from ansible_collections.perfscale.topsail.plugins.module_utils.config import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree
from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import s3_client
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError, SecretError

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "fixtures"))
import trees  # noqa: E402  pylint: disable=wrong-import-position

MIB = transfer.MIB


class MemoryStore:
    """put/get/list/multipart like S3; ``fail_puts_after`` makes later PUTs fail as a lost connection."""

    def __init__(self, fail_puts_after=None):
        self.objects = {}
        self.puts = 0
        self.gets = 0
        self.fail_puts_after = fail_puts_after

    def _put(self, key, data):
        if self.fail_puts_after is not None and self.puts >= self.fail_puts_after:
            raise s3_client.S3Error("PUT %s: connection reset" % (key,))
        self.puts += 1
        self.objects[key] = data

    def put_object(self, bucket, key, data):
        self._put((bucket, key), data)
        return hashlib.md5(data).hexdigest()

    def put_multipart(self, bucket, key, parts):
        parts = list(parts)
        self._put((bucket, key), b"".join(parts))
        etag = "%s-%d" % (hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest(), len(parts))
        self.objects[("etag", bucket, key)] = etag
        return etag

    def list_objects(self, bucket, prefix=""):
        return {key: {"size": len(data), "etag": self.objects.get(("etag", bucket, key), hashlib.md5(data).hexdigest())}
                for (b, key), data in ((k, v) for k, v in self.objects.items() if k[0] != "etag")
                if b == bucket and key.startswith(prefix)}

    def get_object(self, bucket, key):
        self.gets += 1
        if (bucket, key) not in self.objects:
            raise s3_client.S3Error("GET %s/%s: 404 NoSuchKey" % (bucket, key), status=404, code="NoSuchKey")
        return self.objects[(bucket, key)]

    def get_object_into(self, bucket, key, handle):
        handle.write(self.get_object(bucket, key))


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


def test_the_etag_of_a_file_is_the_one_s3_gives_it_single_or_multipart(tmp_path):
    store = MemoryStore()
    for size in (0, 10, 5 * MIB, 5 * MIB + 1, 11 * MIB + 7):
        path = tmp_path / ("f%d" % size)
        data = os.urandom(size)
        write(str(path), data)
        sha, etag = transfer._hash_file(str(path), 5 * MIB)
        assert sha == hashlib.sha256(data).hexdigest()
        assert transfer._upload_one(store, "b", "k%d" % size, str(path), size, 5 * MIB) == etag
        assert etag.endswith("-3") == (size == 11 * MIB + 7)


def test_upload_is_resumable_and_sends_only_what_is_missing_or_changed(tmp_path):
    root = tmp_path / "run"
    trees.make_tree(str(root), points=3)
    store = MemoryStore(fail_puts_after=4)
    url = "s3://bkt/ci/run-1234"
    cut = transfer.upload_tree(store, str(root), url, "1234", parallel=1, part_size=5 * MIB)
    assert not cut["complete"] and cut["uploaded"] == 4 and len(cut["failed"]) == cut["files"] - 4
    assert ("bkt", "ci/run-1234/" + transfer.MANIFEST_NAME) not in store.objects
    store.fail_puts_after = None
    rest = transfer.upload_tree(store, str(root), url, "1234", parallel=3, part_size=5 * MIB)
    assert rest["complete"] and rest["already_there"] == 4 and rest["uploaded"] == cut["files"] - 4
    # one file changes: only it is sent again (with the manifest)
    write(str(root / "001__matbenchmarking" / "000__matmul_float32_64" / "stderr.log"), b"changed\n")
    puts = store.puts
    again = transfer.upload_tree(store, str(root), url, "1234", part_size=5 * MIB)
    assert again["uploaded"] == 1 and store.puts == puts + 2
    manifest = json.loads(store.objects[("bkt", "ci/run-1234/" + transfer.MANIFEST_NAME)])
    assert manifest["run_id"] == "1234" and set(manifest["files"]) == set(transfer.local_files(str(root)))


def test_the_run_lock_and_transfer_records_are_not_uploaded(tmp_path):
    root = tmp_path / "run"
    trees.make_tree(str(root), points=1)
    for name in (".perfscale-run.lock", transfer.EXPORT_RECORD, "x" + transfer.PARTIAL_SUFFIX):
        write(str(root / name), b"{}")
    os.symlink("/etc", str(root / "outside"))
    files = transfer.local_files(str(root))
    assert not [path for path in files if path.startswith(("outside", ".perfscale-run", transfer.EXPORT_RECORD))
                or path.endswith(transfer.PARTIAL_SUFFIX)]


def uploaded_tree(tmp_path, points=3):
    """A run with parse caches, uploaded."""
    root = tmp_path / "run"
    trees.make_tree(str(root), points=points)
    workload = workload_lib.load_workload("perf_indicators")
    results_tree.parse_results(str(root), workload)
    store = MemoryStore()
    assert transfer.upload_tree(store, str(root), "s3://bkt/ci/run", "1", part_size=5 * MIB)["complete"]
    return root, store, workload


def test_prefer_cache_fetches_the_caches_and_the_parse_is_the_same_from_them(tmp_path):
    root, store, workload = uploaded_tree(tmp_path)
    summary = transfer.download_tree(store, "s3://bkt/ci/run", str(tmp_path / "dl"), "prefer_cache", workload)
    assert summary["left_remote"] > 0 and not summary["notes"]
    assert not list((tmp_path / "dl").glob("*/*/output.json"))
    assert len(list((tmp_path / "dl").glob("*/*/" + results_tree.CACHE_FILE))) == 3
    entries, _warnings = results_tree.parse_results(str(tmp_path / "dl"), workload, write_cache=False)
    originals, _warnings = results_tree.parse_results(str(root), workload, write_cache=False)
    assert [e.from_cache for e in entries] == [True, True, True]
    assert [e.results for e in entries] == [e.results for e in originals]
    # without the download record, the missing files make the caches stale
    os.unlink(str(tmp_path / "dl" / transfer.DOWNLOAD_RECORD))
    entries, _warnings = results_tree.parse_results(str(tmp_path / "dl"), workload, write_cache=False)
    assert [e.from_cache for e in entries] == [False, False, False]


def test_important_resolves_the_workloads_files_through_parent_directories(tmp_path):
    root, store, workload = uploaded_tree(tmp_path, points=2)
    transfer.download_tree(store, "s3://bkt/ci/run", str(tmp_path / "dl"), "important", workload)
    got = {os.path.relpath(os.path.join(d, f), str(tmp_path / "dl"))
           for d, _dirs, files in os.walk(str(tmp_path / "dl")) for f in files}
    assert "000__host__capture_environment/environment.json" in got
    assert "001__matbenchmarking/000__matmul_float32_64/output.json" in got
    assert not [path for path in got if path.endswith(results_tree.CACHE_FILE) or path.endswith("stdout.log")]


def test_a_download_resumes_and_checks_every_file(tmp_path):
    _root, store, workload = uploaded_tree(tmp_path, points=2)
    dest = str(tmp_path / "dl")
    first = transfer.download_tree(store, "s3://bkt/ci/run", dest, "all", workload)
    again = transfer.download_tree(store, "s3://bkt/ci/run", dest, "all", workload)
    assert again["downloaded"] == 0 and again["already_there"] == first["downloaded"]
    # a file changed in the bucket after the manifest: refused, nothing half-written
    key = ("bkt", "ci/run/001__matbenchmarking/000__matmul_float32_64/output.json")
    store.objects[key] = b"tampered"
    os.unlink(os.path.join(dest, "001__matbenchmarking", "000__matmul_float32_64", "output.json"))
    with pytest.raises(transfer.TransferError, match="its SHA-256 differs from the manifest's"):
        transfer.download_tree(store, "s3://bkt/ci/run", dest, "all", workload)
    leftovers = [name for _d, _dirs, files in os.walk(dest) for name in files
                 if name.endswith(transfer.PARTIAL_SUFFIX) or name == "output.json.tmp"]
    assert leftovers == [] and not os.path.exists(
        os.path.join(dest, "001__matbenchmarking", "000__matmul_float32_64", "output.json"))


@pytest.mark.parametrize("url", ["http://bkt/x", "s3://", "s3:///x", "bkt/x", None])
def test_a_url_that_is_not_s3_is_one_line(url):
    with pytest.raises(transfer.TransferError, match="expected s3://bucket/prefix"):
        transfer.parse_url(url)


def test_the_url_file_gives_its_first_line(tmp_path):
    (tmp_path / "u").write_text("\n  s3://bkt/ci/run-1  \nignored\n")
    assert transfer.read_url_file(str(tmp_path / "u")) == "s3://bkt/ci/run-1"
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(transfer.TransferError, match="empty; expected a line s3://bucket/prefix"):
        transfer.read_url_file(str(tmp_path / "empty"))
    with pytest.raises(transfer.TransferError, match="url_file .*missing"):
        transfer.read_url_file(str(tmp_path / "missing"))


def test_an_unknown_mode_is_one_line(tmp_path):
    with pytest.raises(transfer.TransferError, match="mode 'some': expected one of all, important, prefer_cache"):
        transfer.download_tree(MemoryStore(), "s3://bkt/x", str(tmp_path), "some", None)


def test_the_destination_is_the_run_directory_and_its_id():
    section = {"bucket": "bkt", "path_prefix": "/team/ci/"}
    assert transfer.destination_url(section, "/data/runs/20261120-101500/", "0123456789ab") == \
        "s3://bkt/team/ci/20261120-101500-01234567"
    assert transfer.destination_url(dict(section, path_prefix=""), "/x/run", "ab") == "s3://bkt/run-ab"


@pytest.mark.parametrize("values, message", [
    ({"enabled": True}, "enabled: true needs bucket, endpoint_url, credentials_file"),
    ({"enabled": True, "bucket": "b", "endpoint_url": "minio:9000", "credentials_file": "s3"}, "expected http(s)://"),
    ({"part_size_mib": 4}, "part_size_mib"),
    ({"bukcet": "b"}, "unknown key 'export_artifacts.bukcet' (did you mean 'bucket'?)"),
])
def test_the_configuration_section_is_checked(values, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        config_schema.read_section({"export_artifacts": values}, "export_artifacts")


def test_credentials_come_from_the_secrets_directory_and_errors_never_show_them(tmp_path):
    (tmp_path / "s3.yaml").write_text("access_key_id: AK\nsecret_access_key: Very-Secret-1\n")
    (tmp_path / "bad.yaml").write_text("access_key_id: AK\npassword: Very-Secret-2\n")
    environ = {"PERFSCALE_SECRETS_DIR": str(tmp_path)}
    assert transfer.read_credentials({"credentials_file": "s3.yaml"}, {}, environ) == ("AK", "Very-Secret-1")
    with pytest.raises(transfer.TransferError) as bad:
        transfer.read_credentials({"credentials_file": "bad.yaml"}, {}, environ)
    assert "expected YAML with access_key_id and secret_access_key" in str(bad.value)
    assert "Very-Secret-2" not in str(bad.value)
    with pytest.raises(transfer.TransferError, match="credentials_file: missing"):
        transfer.read_credentials({"credentials_file": None}, {}, environ)
    with pytest.raises(SecretError):
        transfer.read_credentials({"credentials_file": "s3.yaml"}, {}, {})


def test_the_artifacts_url_of_a_kpi_document_is_not_a_label():
    """It differs per run: as a label it would cut every exported run from its history."""
    from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base

    document = {"kpi_name": "rate", "value": 1.0, "size": 64, "artifacts_url": "s3://bkt/ci/run-1"}
    assert base.label_part(document) == {"size": 64}


@pytest.mark.parametrize("mode", ["prefer_cache", "important"])
def test_the_prometheus_captures_of_the_tests_come_with_the_cache_or_the_important_files(tmp_path, mode):
    root = tmp_path / "run"
    trees.make_tree(str(root), points=2)
    point = root / "001__matbenchmarking" / "000__matmul_float32_64"
    write(str(point / "002__cluster__query_prometheus_db" / "queries.json"), b'{"queries": {}}')
    write(str(point / "002__cluster__query_prometheus_db" / "gpu.json"), b'{}')
    write(str(root / "003__cluster__dump_prometheus_db" / "prometheus.tar.gz"), b"x" * 100)
    workload = workload_lib.load_workload("perf_indicators")
    results_tree.parse_results(str(root), workload)
    store = MemoryStore()
    transfer.upload_tree(store, str(root), "s3://bkt/ci/run", "1")
    prom = workload_lib.load_prom_workload("prom")
    transfer.download_tree(store, "s3://bkt/ci/run", str(tmp_path / "dl"), mode, workload, prom_workload=prom)
    capture = tmp_path / "dl" / "001__matbenchmarking" / "000__matmul_float32_64" / "002__cluster__query_prometheus_db"
    assert sorted(os.listdir(capture)) == ["gpu.json", "queries.json"]
    assert not (tmp_path / "dl" / "003__cluster__dump_prometheus_db").exists()  # the TSDB dump stays remote
    transfer.download_tree(store, "s3://bkt/ci/run", str(tmp_path / "dl2"), mode, workload)
    assert not (tmp_path / "dl2" / capture.relative_to(tmp_path / "dl")).exists()


def hostile(store, entries, objects=None):
    """Rewrite the uploaded manifest with extra ``entries`` ({name: data}), their objects put as named."""
    key = ("bkt", "ci/run/" + transfer.MANIFEST_NAME)
    manifest = json.loads(store.objects[key])
    for name, data in entries.items():
        manifest["files"][name] = {"size": len(data), "mtime_ns": 1, "sha256": hashlib.sha256(data).hexdigest(),
                                   "etag": hashlib.md5(data).hexdigest()}
        store.objects[("bkt", "ci/run/" + name)] = data
    for name, data in (objects or {}).items():
        store.objects[("bkt", "ci/run/" + name)] = data
    store.objects[key] = json.dumps(manifest).encode()


def files_under(path):
    return sorted(os.path.relpath(os.path.join(d, f), str(path)) for d, _dirs, fs in os.walk(str(path)) for f in fs)


@pytest.mark.parametrize("mode", transfer.mode_names())
@pytest.mark.parametrize("name,problem", [
    ("../outside/settings.yaml", "has a '..' segment"), ("../../x", "has a '..' segment"),
    ("/tmp/abs/settings.yaml", "absolute"), ("a//settings.yaml", "has an empty segment"),
    ("001__matbenchmarking\\..\\..\\x", "holds a backslash"), ("C:/x/settings.yaml", "has a drive prefix"),
])
def test_a_manifest_naming_a_place_outside_the_directory_is_refused_and_nothing_is_written(tmp_path, mode, name, problem):
    _root, store, workload = uploaded_tree(tmp_path, points=1)
    hostile(store, {name: b"owned\n"})
    dest = tmp_path / "area" / "dl"
    with pytest.raises(transfer.TransferError) as refused:
        transfer.download_tree(store, "s3://bkt/ci/run", str(dest), mode, workload)
    message = str(refused.value)
    assert "\n" not in message and "manifest entry(s) refused: %r (%s)" % (name, problem) in message
    assert not dest.exists() and files_under(tmp_path / "area") == []
    assert not os.path.exists("/tmp/abs/settings.yaml")


@pytest.mark.parametrize("entry,problem", [
    ({"size": 10 ** 20, "mtime_ns": 1, "sha256": "0" * 64}, "size 100000000000000000000: expected a whole number"),
    ({"size": -1, "mtime_ns": 1, "sha256": "0" * 64}, "size -1"),
    ({"size": "12", "mtime_ns": 1, "sha256": "0" * 64}, "size '12'"),
    ({"size": 1, "mtime_ns": 1.5, "sha256": "0" * 64}, "mtime_ns 1.5"),
    ({"size": 1, "mtime_ns": 1, "sha256": "nothex"}, "sha256 'nothex'"),
    ("a string", "not an object"),
])
def test_a_manifest_entry_with_absurd_fields_is_refused_by_name(tmp_path, entry, problem):
    _root, store, workload = uploaded_tree(tmp_path, points=1)
    key = ("bkt", "ci/run/" + transfer.MANIFEST_NAME)
    manifest = json.loads(store.objects[key])
    manifest["files"]["extra.txt"] = entry
    store.objects[key] = json.dumps(manifest).encode()
    with pytest.raises(transfer.TransferError, match="1 unusable entr\\(y/ies\\): 'extra.txt' \\(%s" % problem.replace(
            "(", "\\(")):
        transfer.download_tree(store, "s3://bkt/ci/run", str(tmp_path / "dl"), "all", workload)
    assert not (tmp_path / "dl").exists()


@pytest.mark.parametrize("name", [transfer.DOWNLOAD_RECORD, "sub/x" + transfer.PARTIAL_SUFFIX])
def test_a_manifest_cannot_name_the_downloads_own_files(tmp_path, name):
    _root, store, workload = uploaded_tree(tmp_path, points=1)
    hostile(store, {name: b"{}"})
    with pytest.raises(transfer.TransferError, match="a name the download keeps for itself"):
        transfer.download_tree(store, "s3://bkt/ci/run", str(tmp_path / "dl"), "all", workload)


def test_an_object_longer_than_its_entry_is_cut_off_and_not_kept(tmp_path):
    _root, store, workload = uploaded_tree(tmp_path, points=1)
    hostile(store, {"big.bin": b"x" * 10}, objects={"big.bin": b"x" * (3 * MIB)})
    with pytest.raises(transfer.TransferError, match="big.bin: more than the 10 bytes of its manifest entry"):
        transfer.download_tree(store, "s3://bkt/ci/run", str(tmp_path / "dl"), "all", workload)
    assert not [name for name in files_under(tmp_path / "dl") if "big.bin" in name]
