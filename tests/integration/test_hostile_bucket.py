"""A hostile or careless bucket, served by the S3 server the other tests use (moto, on 127.0.0.1):
objects whose keys hold ``../``, a manifest naming places outside the download directory, objects
larger than their entries, wrong checksums. Every download mode refuses, in one line, and writes
nothing outside its directory (and nothing at all when the manifest itself is refused)."""

import hashlib
import json
import os
import sys

import pytest

from helpers import REPO

sys.path.insert(0, os.path.join(REPO, "tests"))
import s3_server  # noqa: E402  pylint: disable=wrong-import-position
sys.path.insert(0, os.path.join(REPO, "tests", "fixtures"))
import trees  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import artifact_transfer as transfer  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib  # noqa: E402

pytestmark = pytest.mark.skipif(not s3_server.available(), reason="moto's S3 server is not installed in "
                                                                  ".venv/s3-server (make setup-test installs it)")
BUCKET = "shared-results"


@pytest.fixture(scope="module")
def bucket(tmp_path_factory):
    with s3_server.running("anyone", "Hostile-Bucket-Secret-1", buckets=[BUCKET]) as (_url, client):
        root = tmp_path_factory.mktemp("upload") / "run"
        trees.make_tree(str(root), points=1)
        workload = workload_lib.load_workload("perf_indicators")
        results_tree.parse_results(str(root), workload)
        assert transfer.upload_tree(client, str(root), "s3://%s/ci/good" % BUCKET, "1")["complete"]
        yield client, workload


def publish(client, prefix, extra_entries, objects):
    """The good run's manifest under a new prefix, with ``extra_entries``; its objects copied, and
    ``objects`` ({key below the prefix: data}) put as given."""
    manifest = json.loads(client.get_object(BUCKET, "ci/good/" + transfer.MANIFEST_NAME))
    for name in manifest["files"]:
        client.put_object(BUCKET, "%s/%s" % (prefix, name), client.get_object(BUCKET, "ci/good/" + name))
    manifest["files"].update(extra_entries)
    for key, data in objects.items():
        client.put_object(BUCKET, "%s/%s" % (prefix, key), data)
    client.put_object(BUCKET, "%s/%s" % (prefix, transfer.MANIFEST_NAME), json.dumps(manifest).encode())
    return "s3://%s/%s" % (BUCKET, prefix)


def entry(data, size=None, sha=None):
    return {"size": len(data) if size is None else size, "mtime_ns": 1_700_000_000_000_000_000,
            "sha256": sha or hashlib.sha256(data).hexdigest(), "etag": hashlib.md5(data).hexdigest()}


def everything_under(path):
    return sorted(os.path.relpath(os.path.join(d, f), str(path)) for d, _dirs, fs in os.walk(str(path)) for f in fs)


PAYLOAD = b"written by whoever can write to the bucket\n"
REFUSED = [
    ("dotdot", {"../../x": entry(PAYLOAD)}, {"../../x": PAYLOAD}, "'../../x' (has a '..' segment)"),
    ("skeleton", {"../outside/settings.yaml": entry(PAYLOAD)}, {"../outside/settings.yaml": PAYLOAD},
     "'../outside/settings.yaml' (has a '..' segment)"),
    ("absolute", {"/tmp/perfscale-hostile/settings.yaml": entry(PAYLOAD)}, {}, "(absolute)"),
    ("empty", {"a//b/settings.yaml": entry(PAYLOAD)}, {"a//b/settings.yaml": PAYLOAD}, "(has an empty segment)"),
    ("huge", {"huge.bin": entry(PAYLOAD, size=2 ** 60)}, {"huge.bin": PAYLOAD}, "'huge.bin' (size 1152921504606846976"),
]


@pytest.mark.parametrize("mode", transfer.mode_names())
@pytest.mark.parametrize("case", REFUSED, ids=[case[0] for case in REFUSED])
def test_a_hostile_manifest_is_refused_in_every_mode_and_nothing_is_written(bucket, tmp_path, mode, case):
    client, workload = bucket
    name, entries, objects, shown = case
    url = publish(client, "hostile/%s-%s" % (name, mode), entries, objects)
    area = tmp_path / "area"
    dest = area / "inner" / "download"
    with pytest.raises(transfer.TransferError) as refused:
        transfer.download_tree(client, url, str(dest), mode, workload)
    assert shown in str(refused.value) and "\n" not in str(refused.value)
    assert not dest.exists() and everything_under(tmp_path) == []
    assert not os.path.exists("/tmp/perfscale-hostile")


@pytest.mark.parametrize("mode", transfer.mode_names())
def test_objects_that_differ_from_their_entries_are_not_kept(bucket, tmp_path, mode):
    """Wrong checksums and objects longer than their entries, in the files every mode fetches (the
    skeleton's settings.yaml): refused by name, no partial file left, the rest resumable."""
    client, workload = bucket
    good = json.loads(client.get_object(BUCKET, "ci/good/" + transfer.MANIFEST_NAME))["files"]
    settings = sorted(name for name in good if name.endswith("/settings.yaml"))[0]
    top = sorted(name for name in good if "/" not in name)[0]
    objects = {settings: b"not what the manifest says\n", top: b"y" * (good[top]["size"] + 100000)}
    url = publish(client, "tampered/%s" % mode, {}, {})
    for key, data in objects.items():
        client.put_object(BUCKET, "tampered/%s/%s" % (mode, key), data)
    dest = tmp_path / "download"
    with pytest.raises(transfer.TransferError, match="file\\(s\\) failed, first: .*(SHA-256 differs|more than the)"):
        transfer.download_tree(client, url, str(dest), mode, workload)
    left = everything_under(dest)
    assert settings not in left and top not in left
    assert not [name for name in left if name.endswith(transfer.PARTIAL_SUFFIX)]
    assert everything_under(tmp_path) == ["download/" + name for name in left]


def test_a_key_with_dotdot_in_the_bucket_is_not_followed_without_a_manifest_entry(bucket, tmp_path):
    """Objects the manifest does not name are never fetched, whatever their keys."""
    client, workload = bucket
    url = publish(client, "strays", {}, {"../../stray": PAYLOAD, "sub/../../stray2": PAYLOAD})
    summary = transfer.download_tree(client, url, str(tmp_path / "dl"), "all", workload)
    assert summary["files"] == len(json.loads(client.get_object(BUCKET, "ci/good/" + transfer.MANIFEST_NAME))["files"])
    assert not [name for name in everything_under(tmp_path) if "stray" in name]
