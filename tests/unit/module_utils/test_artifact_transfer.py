"""Artifact transfer to S3 and back, against an in-memory store that answers as S3 does (ETags of
single and multipart uploads); the real server is exercised in tests/integration/test_artifacts_s3.py."""

import hashlib
import json
import os
import sys

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import artifact_transfer as transfer
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
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


def test_the_run_records_the_destination_of_an_enabled_section_and_none_otherwise(tmp_path):
    # the destination is transfer's (run/ stands below it): given to run_info, it lands in run.json
    from ansible_collections.perfscale.topsail.plugins.module_utils.run import context as run_context

    section = {"enabled": True, "bucket": "b", "endpoint_url": "http://127.0.0.1:9", "credentials_file": "s3",
               "path_prefix": "runs"}
    run_root = str(tmp_path / "my run")
    os.makedirs(run_root)
    assert transfer.artifacts_destination(run_root, {"export_artifacts": dict(section, enabled=False)}) is None
    assert transfer.artifacts_destination(run_root, {}) is None
    destination = transfer.artifacts_destination(run_root, {"export_artifacts": section})
    info, changed = run_context.run_info(run_root, destination)
    assert changed and info["artifacts_url"] == "s3://b/runs/my_run-%s" % info["run_id"][:8]
    assert run_context.read_run_info(os.path.join(run_root, run_context.RUN_INFO_FILE)) == info


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


# --------------------------------------------------------------------------
# names, urls, credentials: the exact answers


def ticking(*values):
    """A clock that gives ``values`` in turn (the start and the end of a transfer)."""
    values = iter(values)
    return lambda: next(values)


@pytest.mark.parametrize("url, expected", [
    ("s3://bkt/ci/run-1", ("bkt", "ci/run-1")),
    ("  s3://bkt/ci/run-1/  ", ("bkt", "ci/run-1")),
    ("s3://bkt//ci/run-X/", ("bkt", "ci/run-X")),
    ("s3://bkt", ("bkt", "")),
])
def test_a_url_gives_its_bucket_and_its_prefix_without_slashes_around(url, expected):
    assert transfer.parse_url(url) == expected


@pytest.mark.parametrize("url", ["s3:///x/y", "  ", "S3://bkt/x"])
def test_a_url_without_a_bucket_is_refused_with_the_url_shown(url):
    with pytest.raises(transfer.TransferError) as refused:
        transfer.parse_url(url)
    assert str(refused.value) == "url %r: expected s3://bucket/prefix (the artifacts_url of a run)" % (url,)


def test_the_destination_keeps_the_letters_of_its_prefix_and_a_run_without_id_gets_an_empty_suffix():
    section = {"bucket": "bkt", "path_prefix": "/Xteam/ciX/"}
    assert transfer.destination_url(section, "/data/runs/r1", None) == "s3://bkt/Xteam/ciX/r1-"
    assert transfer.destination_url({"bucket": "bkt"}, "/data/runs/r1", "") == "s3://bkt/r1-"


def test_the_url_file_errors_are_one_line_with_the_systems_reason(tmp_path):
    missing = str(tmp_path / "missing")
    with pytest.raises(transfer.TransferError) as absent:
        transfer.read_url_file(missing)
    assert str(absent.value) == "url_file %s: No such file or directory" % missing
    (tmp_path / "blank").write_text("  \n\n")
    with pytest.raises(transfer.TransferError) as blank:
        transfer.read_url_file(str(tmp_path / "blank"))
    assert str(blank.value) == "url_file %s: empty; expected a line s3://bucket/prefix" % (tmp_path / "blank")


def test_credentials_follow_the_configured_secrets_directory_variable(tmp_path):
    (tmp_path / "s3.yaml").write_text("access_key_id: AK\nsecret_access_key: SK\n")
    config = {"secrets": {"dir_env": "MY_SECRETS"}}
    assert transfer.read_credentials({"credentials_file": "secret:s3.yaml"}, config, {"MY_SECRETS": str(tmp_path)}) == \
        ("AK", "SK")
    with pytest.raises(transfer.TransferError) as missing:
        transfer.read_credentials({}, config, {"MY_SECRETS": str(tmp_path)})
    assert str(missing.value) == ("export_artifacts.credentials_file: missing; expected the name of a file of the secrets "
                                  "directory holding access_key_id and secret_access_key")


# --------------------------------------------------------------------------
# hashing and the local file list


def s3_etag(data, part_size):
    """The ETag S3 gives an object uploaded in ``part_size`` parts (computed here from the parts)."""
    if len(data) <= part_size:
        return hashlib.md5(data).hexdigest()
    parts = [data[start:start + part_size] for start in range(0, len(data), part_size)]
    return "%s-%d" % (hashlib.md5(b"".join(hashlib.md5(part).digest() for part in parts)).hexdigest(), len(parts))


@pytest.mark.parametrize("size, part_size", [(2 * MIB + 5, 700000), (3 * MIB, MIB + 1), (MIB + 1, 1000)])
def test_the_etag_is_right_when_parts_do_not_line_up_with_read_blocks(tmp_path, size, part_size):
    data = bytes(range(256)) * (size // 256) + b"t" * (size % 256)
    write(str(tmp_path / "f"), data)
    assert transfer._hash_file(str(tmp_path / "f"), part_size) == (hashlib.sha256(data).hexdigest(),
                                                                   s3_etag(data, part_size))


def test_a_large_file_goes_in_parts_to_its_own_key(tmp_path):
    store = MemoryStore()
    data = os.urandom(6 * MIB)
    write(str(tmp_path / "big"), data)
    etag = transfer._upload_one(store, "bkt", "ci/big", str(tmp_path / "big"), len(data), 5 * MIB)
    assert etag == s3_etag(data, 5 * MIB) and etag.endswith("-2")
    assert store.objects[("bkt", "ci/big")] == data


def test_local_files_are_every_regular_file_inside_the_run_and_nothing_else(tmp_path):
    root = tmp_path / "run"
    (tmp_path / "secret.txt").write_text("outside\n")
    for name in (".perfscale-run.lock", "a.txt", transfer.LOCAL_MANIFEST, "b.txt", "c" + transfer.PARTIAL_SUFFIX, "d.txt",
                 transfer.MANIFEST_NAME, "sub/e.txt", "sub/" + transfer.DOWNLOAD_RECORD, "sub/f.txt", transfer.EXPORT_RECORD):
        write(str(root / name), b"x")
    os.symlink(str(tmp_path / "secret.txt"), str(root / "link-out.txt"))
    os.symlink(str(root / "a.txt"), str(root / "link-in.txt"))
    files = transfer.local_files(str(root))
    assert sorted(files) == ["a.txt", "b.txt", "d.txt", "link-in.txt", "sub/e.txt", "sub/f.txt"]
    assert files["sub/e.txt"] == os.path.join(str(root), "sub", "e.txt")


def small_run(tmp_path):
    root = tmp_path / "run"
    write(str(root / "a.txt"), b"abc")
    write(str(root / "sub" / "b.bin"), b"12345")
    return root


def test_describe_files_reuses_the_hashes_of_files_whose_size_and_time_did_not_change(tmp_path):
    root = small_run(tmp_path)
    stat = os.stat(str(root / "a.txt"))
    fresh = {"size": 3, "mtime_ns": stat.st_mtime_ns, "sha256": hashlib.sha256(b"abc").hexdigest(),
             "etag": hashlib.md5(b"abc").hexdigest()}
    assert transfer.describe_files(str(root), 5 * MIB)["a.txt"] == fresh
    remembered = dict(fresh, sha256="f" * 64, etag="remembered")

    def describe(entry, part_size=5 * MIB, recorded_part_size=5 * MIB):
        with open(str(root / transfer.LOCAL_MANIFEST), "w", encoding="utf-8") as handle:
            json.dump({"part_size": recorded_part_size, "files": {"a.txt": entry}}, handle)
        return transfer.describe_files(str(root), part_size)["a.txt"]

    assert describe(remembered) == remembered
    assert describe(remembered, part_size=6 * MIB) == fresh  # another part size: other ETags
    assert describe(remembered, part_size=6 * MIB, recorded_part_size=6 * MIB) == remembered
    assert describe(dict(remembered, size=4)) == fresh
    assert describe(dict(remembered, mtime_ns=stat.st_mtime_ns + 1)) == fresh
    assert describe("not an entry") == fresh
    (root / transfer.LOCAL_MANIFEST).write_text("[1, 2]")
    assert transfer.describe_files(str(root), 5 * MIB)["a.txt"] == fresh


# --------------------------------------------------------------------------
# upload: the summary, the manifest, the failures


def test_an_upload_summary_counts_files_and_bytes_and_its_duration(tmp_path):
    root = small_run(tmp_path)
    store = MemoryStore()
    url = "s3://bkt/ci/run"
    summary = transfer.upload_tree(store, str(root), url, "r1", part_size=5 * MIB, clock=ticking(10.0, 11.23456))
    assert summary == {"url": url, "files": 2, "uploaded": 2, "already_there": 0, "bytes_uploaded": 8, "bytes_total": 8,
                       "failed": [], "complete": True, "seconds": 1.235}
    again = transfer.upload_tree(store, str(root), url, "r1", part_size=5 * MIB, clock=ticking(0.0, 0.5))
    assert again == dict(summary, uploaded=0, already_there=2, bytes_uploaded=0, seconds=0.5)


def test_the_manifest_is_sorted_json_with_its_format_part_size_and_utc_time_and_a_local_copy_is_kept(tmp_path):
    root = small_run(tmp_path)
    store = MemoryStore()
    transfer.upload_tree(store, str(root), "s3://bkt/ci/run", "r1", part_size=5 * MIB)
    raw = store.objects[("bkt", "ci/run/" + transfer.MANIFEST_NAME)]
    manifest = json.loads(raw)
    assert raw == json.dumps(manifest, sort_keys=True).encode()
    assert sorted(manifest) == ["files", "format", "part_size", "run_id", "uploaded"]
    assert (manifest["format"], manifest["part_size"], manifest["run_id"]) == (1, 5 * MIB, "r1")
    assert manifest["uploaded"].endswith("+00:00") and len(manifest["uploaded"]) == len("2026-11-20T10:00:00+00:00")
    assert manifest["files"] == transfer.describe_files(str(root), 5 * MIB)
    with open(str(root / transfer.LOCAL_MANIFEST), encoding="utf-8") as handle:
        assert json.load(handle) == {"part_size": 5 * MIB, "files": manifest["files"]}


def test_a_part_size_under_five_mib_is_refused(tmp_path):
    # a directory of this test's own (a mutant that went on would write there, never outside)
    with pytest.raises(transfer.TransferError) as refused:
        transfer.upload_tree(MemoryStore(), str(tmp_path / "run"), "s3://bkt/x", part_size=5 * MIB - 1)
    assert str(refused.value) == "export_artifacts.part_size_mib: expected at least 5 (S3's smallest part)"


class FailingStore(MemoryStore):
    """A store that fails the PUTs (and counts them) or the listing as told."""

    def __init__(self, fail_put=None, etag=None, fail_list=None):
        super().__init__()
        self.fail_put = fail_put or (lambda key: None)
        self.etag = etag
        self.fail_list = fail_list
        self.attempts = []

    def _put(self, key, data):
        self.attempts.append(key[1])
        error = self.fail_put(key[1])
        if error:
            raise error
        super()._put(key, data)

    def put_object(self, bucket, key, data):
        etag = super().put_object(bucket, key, data)
        return self.etag if self.etag and not key.endswith(transfer.MANIFEST_NAME) else etag

    def list_objects(self, bucket, prefix=""):
        if self.fail_list:
            raise self.fail_list
        return super().list_objects(bucket, prefix)


def test_once_the_store_cannot_be_reached_the_other_files_are_not_tried(tmp_path):
    root = small_run(tmp_path)
    write(str(root / "c.txt"), b"c")
    store = FailingStore(fail_put=lambda key: s3_client.S3Error("PUT %s: connection refused" % key))
    summary = transfer.upload_tree(store, str(root), "s3://bkt/ci/run", parallel=1, part_size=5 * MIB)
    assert store.attempts == ["ci/run/a.txt"]
    assert summary["failed"] == ["a.txt: PUT ci/run/a.txt: connection refused",
                                 "c.txt: not sent: the store could not be reached for an earlier file",
                                 "sub/b.bin: not sent: the store could not be reached for an earlier file"]
    assert (summary["complete"], summary["uploaded"], summary["bytes_uploaded"]) == (False, 0, 0)


def test_a_refused_file_does_not_stop_the_others(tmp_path):
    root = small_run(tmp_path)
    write(str(root / "c.txt"), b"c")
    store = FailingStore(fail_put=lambda key: s3_client.S3Error("PUT: 403 AccessDenied", status=403)
                         if key.endswith("a.txt") else None)
    summary = transfer.upload_tree(store, str(root), "s3://bkt/ci/run", parallel=1, part_size=5 * MIB)
    assert summary["failed"] == ["a.txt: PUT: 403 AccessDenied"]
    assert (summary["uploaded"], summary["bytes_uploaded"], summary["complete"]) == (2, 6, False)
    assert ("bkt", "ci/run/" + transfer.MANIFEST_NAME) not in store.objects


def test_a_store_answering_another_checksum_fails_each_such_file(tmp_path):
    root = small_run(tmp_path)
    store = FailingStore(etag="0123")
    summary = transfer.upload_tree(store, str(root), "s3://bkt/ci/run", parallel=1, part_size=5 * MIB)
    assert summary["failed"] == [
        "a.txt: the store's checksum 0123 differs from the file's %s" % hashlib.md5(b"abc").hexdigest(),
        "sub/b.bin: the store's checksum 0123 differs from the file's %s" % hashlib.md5(b"12345").hexdigest()]
    assert (summary["uploaded"], summary["bytes_uploaded"], summary["complete"]) == (0, 0, False)


def test_a_manifest_that_cannot_be_sent_leaves_the_upload_incomplete(tmp_path):
    root = small_run(tmp_path)
    store = FailingStore(fail_put=lambda key: s3_client.S3Error("PUT: 503 SlowDown", status=503)
                         if key.endswith(transfer.MANIFEST_NAME) else None)
    summary = transfer.upload_tree(store, str(root), "s3://bkt/ci/run", part_size=5 * MIB, clock=ticking(1.0, 3.0))
    assert summary == {"url": "s3://bkt/ci/run", "files": 2, "uploaded": 2, "already_there": 0, "bytes_uploaded": 8,
                       "bytes_total": 8, "failed": [transfer.MANIFEST_NAME + ": PUT: 503 SlowDown"], "complete": False,
                       "seconds": 2.0}
    assert not (root / transfer.LOCAL_MANIFEST).exists()


def test_a_bucket_that_cannot_be_listed_is_one_line(tmp_path):
    store = FailingStore(fail_list=s3_client.S3Error("LIST: 403 AccessDenied", status=403))
    with pytest.raises(transfer.TransferError) as refused:
        transfer.upload_tree(store, str(tmp_path / "run"), "s3://bkt/ci/run", part_size=5 * MIB)
    assert str(refused.value) == "export_artifacts to s3://bkt/ci/run: LIST: 403 AccessDenied"


# --------------------------------------------------------------------------
# the remote tree


class Workload:
    """The two things a mode reads of a workload: its artifact directories and its important files."""

    def __init__(self, important_files, artifact_dirnames=None):
        self.important_files = important_files
        self.artifact_dirnames = artifact_dirnames or {}


def remote(tmp_path, names):
    return transfer.RemoteTree(str(tmp_path), {name: {"size": 1, "mtime_ns": 7} for name in names})


def test_the_remote_tree_lists_files_and_directories_and_matches_globs(tmp_path):
    tree = remote(tmp_path, ["run.json", "t/a-1.json", "t/a-2.json", "t/b.log", "t/sub/c.json"])
    assert tree.listdir(str(tmp_path)) == ["run.json", "t"]
    assert tree.listdir(str(tmp_path / "t")) == ["a-1.json", "a-2.json", "b.log", "sub"]
    assert sorted(tree.matching(str(tmp_path / "t" / "a-*.json"))) == ["t/a-1.json", "t/a-2.json"]
    assert sorted(tree.matching(str(tmp_path / "t" / "*?[0-9].json"))) == ["t/a-1.json", "t/a-2.json"]
    assert tree.matching(str(tmp_path / "t" / "b.log")) == ["t/b.log"]
    assert tree.matching(str(tmp_path / "t" / "absent.log")) == []
    assert tree.state(str(tmp_path / "t" / "b.log")) == [1, 7] and tree.state(str(tmp_path / "nope")) is None


def test_important_files_follow_the_workload_keys_to_files_and_whole_directories(tmp_path):
    tree = remote(tmp_path, [
        "run.json", "logs/a.txt", "logs/b.txt", "000__host__capture_environment/environment.json",
        "000__host__capture_environment/other.txt", "000__host__capture_environment/sub/deep.json",
        "t/settings.yaml", "t/exit_code", "t/out-1.json", "t/out-2.json", "t/readme.txt", "t/notes/n.txt",
        "t/sub/x.log"])
    workload = Workload(["MISSING/x.json", "ENV/environment.json", "ENV/sub/deep.json", "LOGS", "RUN_INFO", "out-*.json",
                         "sub/x.log", "notes", "absent.txt", "exit_code"],
                        {"MISSING": "*__nothing", "ENV": "*__host__capture_environment", "LOGS": "logs",
                         "RUN_INFO": "run.json"})
    assert tree.important_files(str(tmp_path / "t"), workload, {}) == {
        "000__host__capture_environment/environment.json", "000__host__capture_environment/sub/deep.json",
        "logs/a.txt", "logs/b.txt", "run.json", "t/out-1.json", "t/out-2.json", "t/sub/x.log", "t/exit_code"}


def test_the_prometheus_captures_are_those_inside_the_given_tests_even_the_run_itself(tmp_path):
    prom = Workload([])
    prom.CAPTURE_DIR_GLOB = "*__query_prometheus_db"
    tests = remote(tmp_path, ["a/settings.yaml", "a/exit_code", "a/001__query_prometheus_db/q.json",
                              "ab/001__query_prometheus_db/q.json", "b/002__query_prometheus_db/r.json", "a/x.json"])
    plan = transfer.DownloadPlan(tests, Workload([]), None, prom)
    assert plan.prom_captures([str(tmp_path / "a")]) == {"a/001__query_prometheus_db/q.json"}
    single = remote(tmp_path, ["settings.yaml", "exit_code", "001__query_prometheus_db/q.json", "x.json"])
    plan = transfer.DownloadPlan(single, Workload([]), None, prom)
    assert plan.prom_captures([str(tmp_path)]) == {"001__query_prometheus_db/q.json"}
    assert transfer.DownloadPlan(single, Workload([]), None).prom_captures([str(tmp_path)]) == set()


# --------------------------------------------------------------------------
# download: the summary, the record, resuming


def uploaded_small(tmp_path):
    root = small_run(tmp_path)
    store = MemoryStore()
    assert transfer.upload_tree(store, str(root), "s3://bkt/ci/run", "r1", part_size=5 * MIB)["complete"]
    return root, store


def read_record(dest):
    with open(os.path.join(str(dest), transfer.DOWNLOAD_RECORD), encoding="utf-8") as handle:
        return json.load(handle)


def test_a_download_summary_and_record_say_what_was_fetched_and_what_is_left(tmp_path):
    _root, store = uploaded_small(tmp_path)
    dest = tmp_path / "dl"
    summary = transfer.download_tree(store, "s3://bkt/ci/run", str(dest), "all", None, clock=ticking(10.0, 11.23456))
    assert summary == {"downloaded": 2, "bytes_downloaded": 8, "already_there": 0, "url": "s3://bkt/ci/run",
                       "mode": "all", "artifact_dir": str(dest), "files": 2, "left_remote": 0, "bytes_total": 8,
                       "notes": [], "seconds": 1.235}
    assert read_record(dest) == {"url": "s3://bkt/ci/run", "mode": "all", "run_id": "r1", "complete": True,
                                 "left_remote": {}}
    assert (dest / "sub" / "b.bin").read_bytes() == b"12345"


def test_the_files_a_mode_leaves_remote_are_recorded_with_their_size_and_time(tmp_path):
    root = tmp_path / "run"
    for name, data in (("run.json", b"{}"), ("t/settings.yaml", b"a: 1\n"), ("t/exit_code", b"0\n"),
                       ("t/out.json", b"[1]"), ("t/big.log", b"log!")):
        write(str(root / name), data)
    store = MemoryStore()
    transfer.upload_tree(store, str(root), "s3://bkt/ci/run", "r2", part_size=5 * MIB)
    dest = tmp_path / "dl"
    summary = transfer.download_tree(store, "s3://bkt/ci/run", str(dest), "important", Workload(["out.json"]))
    assert files_under(dest) == sorted([transfer.DOWNLOAD_RECORD, "run.json", "t/settings.yaml", "t/exit_code",
                                        "t/out.json"])
    assert (summary["downloaded"], summary["left_remote"], summary["files"]) == (4, 1, 5)
    big = os.stat(str(root / "t" / "big.log"))
    assert read_record(dest) == {"url": "s3://bkt/ci/run", "mode": "important", "run_id": "r2", "complete": True,
                                 "left_remote": {"t/big.log": [4, big.st_mtime_ns]}}
    assert os.stat(str(dest / "t" / "out.json")).st_mtime_ns == os.stat(str(root / "t" / "out.json")).st_mtime_ns


def test_failed_files_are_all_counted_the_record_stays_incomplete_and_a_rerun_resumes(tmp_path):
    _root, store = uploaded_small(tmp_path)
    originals = dict(store.objects)
    store.objects[("bkt", "ci/run/a.txt")] = b"xyz"
    store.objects[("bkt", "ci/run/sub/b.bin")] = b"54321"
    dest = tmp_path / "dl"
    with pytest.raises(transfer.TransferError) as failed:
        transfer.download_tree(store, "s3://bkt/ci/run", str(dest), "all", None)
    assert str(failed.value) == ("download of s3://bkt/ci/run: 2 file(s) failed, first: a.txt: ci/run/a.txt: its SHA-256 "
                                 "differs from the manifest's (changed in the bucket?) (re-run to resume)")
    assert read_record(dest) == {"url": "s3://bkt/ci/run", "mode": "all", "run_id": "r1", "complete": False}
    store.objects.update(originals)
    summary = transfer.download_tree(store, "s3://bkt/ci/run", str(dest), "all", None)
    assert (summary["downloaded"], summary["already_there"]) == (2, 0) and read_record(dest)["complete"] is True


def test_a_local_file_of_the_right_size_but_another_time_is_fetched_again(tmp_path):
    _root, store = uploaded_small(tmp_path)
    dest = tmp_path / "dl"
    transfer.download_tree(store, "s3://bkt/ci/run", str(dest), "all", None)
    (dest / "a.txt").write_bytes(b"ABC")
    os.utime(str(dest / "a.txt"), ns=(1, 1))
    summary = transfer.download_tree(store, "s3://bkt/ci/run", str(dest), "all", None)
    assert (summary["downloaded"], summary["bytes_downloaded"], summary["already_there"]) == (1, 3, 1)
    assert (dest / "a.txt").read_bytes() == b"abc"


def test_the_destination_may_be_an_empty_directory_but_not_someone_elses(tmp_path):
    _root, store = uploaded_small(tmp_path)
    (tmp_path / "empty").mkdir()
    assert transfer.download_tree(store, "s3://bkt/ci/run", str(tmp_path / "empty"), "all", None)["downloaded"] == 2
    write(str(tmp_path / "busy" / "notes.txt"), b"mine")
    with pytest.raises(transfer.TransferError) as refused:
        transfer.download_tree(store, "s3://bkt/ci/run", str(tmp_path / "busy"), "all", None)
    assert str(refused.value) == ("artifact_dir %s: not empty and not a download of s3://bkt/ci/run; expected a new or "
                                  "empty directory" % (tmp_path / "busy"))
    store.objects[("bkt", "other/" + transfer.MANIFEST_NAME)] = store.objects[("bkt", "ci/run/" + transfer.MANIFEST_NAME)]
    with pytest.raises(transfer.TransferError, match="^artifact_dir .*/empty: not empty and not a download of s3://bkt/other;"):
        transfer.download_tree(store, "s3://bkt/other", str(tmp_path / "empty"), "all", None)


def test_an_unknown_mode_names_the_known_ones(tmp_path):
    with pytest.raises(transfer.TransferError) as refused:
        transfer.download_tree(MemoryStore(), "s3://bkt/x", str(tmp_path), "most", None)
    assert str(refused.value) == "mode 'most': expected one of all, important, prefer_cache"


class ChunkedStore(MemoryStore):
    """Streams objects in small chunks, as the real client does."""

    def get_object_into(self, bucket, key, handle):
        data = self.get_object(bucket, key)
        for start in range(0, len(data), 4):
            handle.write(data[start:start + 4])


def test_an_object_streaming_past_its_size_is_stopped_with_its_key_and_size(tmp_path):
    _root, store = uploaded_small(tmp_path)
    chunked = ChunkedStore()
    chunked.objects = store.objects
    chunked.objects[("bkt", "ci/run/sub/b.bin")] = b"123456789"
    with pytest.raises(transfer.TransferError) as refused:
        transfer.download_tree(chunked, "s3://bkt/ci/run", str(tmp_path / "dl"), "all", None)
    assert str(refused.value) == ("download of s3://bkt/ci/run: 1 file(s) failed, first: sub/b.bin: ci/run/sub/b.bin: more "
                                  "than the 5 bytes of its manifest entry (changed in the bucket?) (re-run to resume)")
    assert files_under(tmp_path / "dl") == [transfer.DOWNLOAD_RECORD, "a.txt"]


def test_prefer_cache_downloads_the_important_files_of_tests_whose_cache_is_missing_or_corrupt(tmp_path):
    root = tmp_path / "run"
    points = trees.make_tree(str(root), points=3)
    workload = workload_lib.load_workload("perf_indicators")
    results_tree.parse_results(str(root), workload)
    os.unlink(os.path.join(points[0], results_tree.CACHE_FILE))
    with open(os.path.join(points[1], results_tree.CACHE_FILE), "w", encoding="utf-8") as handle:
        handle.write("{not json")
    store = MemoryStore()
    transfer.upload_tree(store, str(root), "s3://bkt/ci/run", "1", part_size=5 * MIB)
    summary = transfer.download_tree(store, "s3://bkt/ci/run", str(tmp_path / "dl"), "prefer_cache", workload)
    assert summary["notes"] == ["2 test(s) without a usable parse cache (missing, or parsed by other workload code): "
                                "their important files were downloaded"]
    outputs = [os.path.exists(os.path.join(str(tmp_path / "dl"), os.path.relpath(point, str(root)), "output.json"))
               for point in points]
    assert outputs == [True, True, False]


# --------------------------------------------------------------------------
# the manifest: read, then checked entry by entry


def test_the_manifest_problems_are_one_line_each(tmp_path):
    store = MemoryStore()
    with pytest.raises(transfer.TransferError) as missing:
        transfer.read_manifest(store, "s3://bkt/none")
    assert str(missing.value) == ("url s3://bkt/none: no complete upload there (no .perfscale_artifacts_manifest.json: "
                                  "the export did not finish, or the prefix is wrong)")
    for data, problem in ((b"{not json", "is not JSON"), (b"[]", "has no file list"), (b'{"files": []}', "has no file list")):
        store.objects[("bkt", "x/" + transfer.MANIFEST_NAME)] = data
        with pytest.raises(transfer.TransferError) as bad:
            transfer.read_manifest(store, "s3://bkt/x/")
        assert str(bad.value) == "url s3://bkt/x/: its .perfscale_artifacts_manifest.json %s" % problem


def test_a_store_error_reading_the_manifest_is_passed_on():
    class Broken(MemoryStore):
        def get_object(self, bucket, key):
            raise s3_client.S3Error("GET %s/%s: 500 InternalError" % (bucket, key), status=500)

    with pytest.raises(transfer.TransferError) as broken:
        transfer.read_manifest(Broken(), "s3://bkt/x")
    assert str(broken.value) == "url s3://bkt/x: GET bkt/x/.perfscale_artifacts_manifest.json: 500 InternalError"


GOOD = {"size": 1, "mtime_ns": 1, "sha256": "0" * 64}


@pytest.mark.parametrize("name, entry, problem", [
    ("ok.txt", GOOD, None),
    ("empty.txt", dict(GOOD, size=0, mtime_ns=0), None),
    ("huge.bin", dict(GOOD, size=5 * 1024 ** 4), None),
    ("huger.bin", dict(GOOD, size=5 * 1024 ** 4 + 1),
     "size 5497558138881: expected a whole number of bytes up to 5497558138880"),
    ("bool.txt", dict(GOOD, size=True), "size True: expected a whole number of bytes up to 5497558138880"),
    ("old.txt", dict(GOOD, mtime_ns=-1), "mtime_ns -1: expected a whole number of nanoseconds"),
    ("short.txt", dict(GOOD, sha256="0" * 63), "sha256 '%s': expected 64 lowercase hex digits" % ("0" * 63)),
    ("upper.txt", dict(GOOD, sha256="A" * 64), "sha256 '%s': expected 64 lowercase hex digits" % ("A" * 64)),
    ("none.txt", dict(GOOD, sha256=None), "sha256 None: expected 64 lowercase hex digits"),
    ("int.txt", dict(GOOD, sha256=12), "sha256 12: expected 64 lowercase hex digits"),
    ("long.txt", dict(GOOD, sha256="g" * 100), "sha256 '%s': expected 64 lowercase hex digits" % ("g" * 80)),
    ("sub/deeper/" + transfer.DOWNLOAD_RECORD, GOOD, "a name the download keeps for itself"),
    ("a/b/.perfscale-run.lock", GOOD, "a name the download keeps for itself"),
    ("a/b/x" + transfer.PARTIAL_SUFFIX, GOOD, "a name the download keeps for itself"),
])
def test_each_manifest_entry_field_has_its_bounds(name, entry, problem):
    assert transfer._entry_problem(name, entry) == problem


def bad_entries(names):
    return {name: "not an entry" for name in names}


@pytest.mark.parametrize("count, more", [(3, ""), (4, " and 1 more"), (5, " and 2 more")])
def test_a_manifest_with_bad_entries_names_the_first_three_and_counts_the_rest(tmp_path, count, more):
    names = ["e%d" % index for index in range(count)]
    with pytest.raises(transfer.TransferError) as refused:
        transfer.check_manifest("s3://bkt/x", str(tmp_path), bad_entries(names))
    assert str(refused.value) == ("url s3://bkt/x: its .perfscale_artifacts_manifest.json has %d unusable entr(y/ies): "
                                  "'e0' (not an object), 'e1' (not an object), 'e2' (not an object)%s; nothing was "
                                  "downloaded" % (count, more))


def test_a_long_bad_name_is_shortened_to_eighty_characters(tmp_path):
    with pytest.raises(transfer.TransferError) as refused:
        transfer.check_manifest("s3://bkt/x", str(tmp_path), bad_entries(["a" * 80, "b" * 81]))
    assert "unusable entr(y/ies): '%s' (not an object), '%s...' (not an object);" % ("a" * 80, "b" * 77) in str(refused.value)


def test_a_manifest_naming_files_other_than_by_text_is_refused_not_a_crash(tmp_path):
    with pytest.raises(transfer.TransferError) as refused:
        transfer.check_manifest("s3://bkt/x", str(tmp_path), {1: GOOD, "a.txt": GOOD})
    assert str(refused.value).startswith("url s3://bkt/x: its .perfscale_artifacts_manifest.json: 1 manifest entry(s) "
                                         "refused: 1 (not text);")


def test_a_download_refusing_a_manifest_says_which_url(tmp_path):
    _root, store = uploaded_small(tmp_path)
    hostile(store, {"../x": b"owned"})
    with pytest.raises(transfer.TransferError) as refused:
        transfer.download_tree(store, "s3://bkt/ci/run", str(tmp_path / "dl"), "all", None)
    assert str(refused.value).startswith("url s3://bkt/ci/run: its .perfscale_artifacts_manifest.json: 1 manifest "
                                         "entry(s) refused: '../x' (has a '..' segment)")
