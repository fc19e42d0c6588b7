"""Fuzz: the names and archives that come from buckets, pods and hosts. Whatever they hold, the
answer is a result or one line, and nothing is written outside the destination."""

import hashlib
import io
import json
import os
import sys
import tarfile
import tempfile

from hypothesis import given, strategies as st

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_strategies import JSON, NAMES, files_outside  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import artifact_transfer as transfer  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.executors.inventory_hosts import InventoryHostsExecutor  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import multi_user  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils import safe_paths  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import MatrixError  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import kubernetes as k8s  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.executors import pod_point  # noqa: E402

WORKLOAD = workload_lib.load_workload("perf_indicators")


def one_line(exc):
    assert "\n" not in str(exc) and str(exc), repr(exc)


class Bucket:
    """A bucket whose manifest is whatever the test says, and which serves every key."""

    def __init__(self, manifest, data=b"x"):
        self.manifest = manifest
        self.data = data

    def get_object(self, bucket, key):
        if key.endswith("/" + transfer.MANIFEST_NAME):
            return self.manifest
        return self.data

    def get_object_into(self, bucket, key, handle):
        handle.write(self.data)


ENTRY = {"size": 1, "mtime_ns": 1, "sha256": hashlib.sha256(b"x").hexdigest()}


@given(names=st.lists(NAMES, max_size=6), mode=st.sampled_from(transfer.mode_names()))
def test_manifest_names(names, mode):
    manifest = json.dumps({"files": {name: ENTRY for name in names}}).encode()
    with tempfile.TemporaryDirectory() as area:
        dest = os.path.join(area, "in", "dl")
        try:
            transfer.download_tree(Bucket(manifest), "s3://b/run", dest, mode, WORKLOAD)
        except transfer.TransferError as exc:
            one_line(exc)
        assert files_outside(dest, area) == []


@given(manifest=st.one_of(JSON.map(lambda tree: json.dumps(tree).encode()), st.binary(max_size=200),
                          st.dictionaries(NAMES, JSON, max_size=3).map(lambda f: json.dumps({"files": f}).encode())))
def test_manifest_documents(manifest):
    with tempfile.TemporaryDirectory() as area:
        dest = os.path.join(area, "in", "dl")
        try:
            transfer.download_tree(Bucket(manifest), "s3://b/run", dest, "all", WORKLOAD)
        except transfer.TransferError as exc:
            one_line(exc)
        assert files_outside(dest, area) == []


KINDS = st.sampled_from([tarfile.REGTYPE, tarfile.REGTYPE, tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE,
                         tarfile.LNKTYPE, tarfile.FIFOTYPE])


def tar_bytes(members, compression="gz"):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:" + compression) as tar:
        for name, kind in members:
            info = tarfile.TarInfo(name)
            info.type = kind
            data = b""
            if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                info.linkname = "../../../etc/passwd"
            elif kind == tarfile.REGTYPE:
                data = b"data"
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


MEMBERS = st.lists(st.tuples(st.one_of(NAMES, st.lists(NAMES, max_size=2).map(lambda p: "000__a/" + "/".join(p))),
                             KINDS), max_size=6)


@given(members=MEMBERS, cut=st.one_of(st.none(), st.integers(min_value=0, max_value=400)))
def test_host_archives(members, cut):
    with tempfile.TemporaryDirectory() as area:
        matrix_dir = os.path.join(area, "matrix")
        os.makedirs(os.path.join(matrix_dir, "000__a"))
        with open(os.path.join(matrix_dir, "000__a", "settings.yaml"), "w") as handle:
            handle.write("a: 1\n")
        archive = os.path.join(area, "points.tar.gz")
        data = tar_bytes(members)
        with open(archive, "wb") as handle:
            handle.write(data if cut is None else data[:cut])
        try:
            InventoryHostsExecutor.unpack(archive, matrix_dir, ["000__a", "001__b"])
        except MatrixError as exc:
            one_line(exc)
            # refused: the point is as it was
            assert sorted(os.listdir(os.path.join(matrix_dir, "000__a"))) == ["settings.yaml"]
        assert files_outside(matrix_dir, area) == [os.path.realpath(archive)]
        assert not [n for n in os.listdir(matrix_dir) if n.startswith(".unpacking")]


class Store:
    def __init__(self, data):
        self.data = data

    def get_object(self, bucket, key):
        return self.data


@given(members=MEMBERS)
def test_minio_archives(members):
    with tempfile.TemporaryDirectory() as area:
        directory = os.path.join(area, "users", "0__user_0")
        os.makedirs(directory)
        record = multi_user.fetch_s3_artifacts(directory, {"user_index": 0, "artifacts_s3_key": "k", "succeeded": True},
                                               Store(tar_bytes(members)), "b")
        if record.get("error"):
            one_line(record["error"])
            assert record["succeeded"] is False
        assert files_outside(directory, area) == []


def archive_log(files, header_count=None, code=0):
    stream = io.StringIO()
    stream.write("%s %d %d\n" % (pod_point.BEGIN, code, len(files) if header_count is None else header_count))
    for name, data in files.items():
        pod_point.write_file_entry(stream, name, data)
    stream.write(pod_point.END + "\n")
    return stream.getvalue()


LOG_LINES = st.lists(st.one_of(
    st.text(max_size=40),
    st.sampled_from([pod_point.BEGIN + " 0 1", pod_point.BEGIN + " x y", pod_point.END, pod_point.FILE + " YQ== 1 0",
                     pod_point.FILE + " Li4vLi4veA== 5 12", pod_point.FILE + " -- -1 -1", "eJxLBAAAYgBi", "!!"]),
), max_size=12)


@given(files=st.dictionaries(NAMES, st.binary(max_size=50), max_size=5), noise=LOG_LINES,
       count_delta=st.integers(min_value=-1, max_value=1), position=st.integers(min_value=0, max_value=2000))
def test_pod_log_archives(files, noise, count_delta, position):
    log = archive_log(files, header_count=len(files) + count_delta)
    # lines of noise inserted somewhere in the log (before, inside or after the archive)
    at = min(position, len(log))
    at = log.rfind("\n", 0, at) + 1
    log = log[:at] + "".join(line + "\n" for line in noise) + log[at:]
    with tempfile.TemporaryDirectory() as area:
        point = os.path.join(area, "point")
        os.makedirs(point)
        try:
            found = k8s.parse_archive(log)
            if found is not None:
                k8s.extract_archive(found[1], point)
        except ValueError as exc:
            one_line(exc)
        assert files_outside(point, area) == []


@given(names=st.lists(NAMES, max_size=6))
def test_the_path_rule_itself(names):
    with tempfile.TemporaryDirectory() as area:
        root = os.path.join(area, "root")
        os.makedirs(root)
        try:
            written = safe_paths.write_files(root, {name: b"1" for name in names})
        except safe_paths.UnsafeName as exc:
            one_line(exc)
            assert os.listdir(root) == []
        else:
            assert len(written) == len(set(names))
        assert files_outside(root, area) == []
