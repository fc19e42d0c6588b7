import datetime
import multiprocessing
import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts as art


def test_allocates_increasing_zero_padded_indexes(tmp_path):
    first = art.allocate_artifact_dir(str(tmp_path), "host__capture_environment")
    second = art.allocate_artifact_dir(str(tmp_path), "matbenchmarking")
    assert os.path.basename(first) == "000__host__capture_environment"
    assert os.path.basename(second) == "001__matbenchmarking"
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "017__manual").mkdir()
    assert os.path.basename(art.allocate_artifact_dir(str(tmp_path), "next")) == "018__next"


def test_names_are_sanitized(tmp_path):
    path = art.allocate_artifact_dir(str(tmp_path), "a b/c:d")
    assert os.path.basename(path) == "000__a_b_c_d"
    with pytest.raises(errors.ArtifactError, match="expected a non-empty string"):
        art.allocate_artifact_dir(str(tmp_path), "  ")
    with pytest.raises(errors.ArtifactError, match="nothing usable remains"):
        art.allocate_artifact_dir(str(tmp_path), "///")


def _allocate_many(args):
    parent, worker, count = args
    return [os.path.basename(art.allocate_artifact_dir(parent, "w%d_%d" % (worker, i))) for i in range(count)]


def test_concurrent_allocation_from_several_processes_never_collides(tmp_path):
    workers, per_worker = 6, 25
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        results = pool.map(_allocate_many, [(str(tmp_path), w, per_worker) for w in range(workers)])
    names = [name for batch in results for name in batch]
    indexes = sorted(int(name.split("__")[0]) for name in names)
    assert indexes == list(range(workers * per_worker))
    assert len(os.listdir(tmp_path)) == workers * per_worker


def test_run_root_precedence(tmp_path):
    env = {"ARTIFACT_DIR": str(tmp_path / "env")}
    assert art.resolve_run_root(str(tmp_path / "explicit"), environ=env) == str(tmp_path / "explicit")
    assert art.resolve_run_root(None, environ=env) == str(tmp_path / "env")
    now = datetime.datetime(2026, 11, 22, 10, 15, 0)
    default = art.resolve_run_root(None, environ={}, base_dir=str(tmp_path), now=now)
    assert default == str(tmp_path / "artifacts" / "20261122-101500")
    os.makedirs(default)
    again = art.resolve_run_root(None, environ={}, base_dir=str(tmp_path), now=now)
    assert again == default + "-2"


def test_write_text_atomic_leaves_no_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "data.json"
    art.write_json_atomic(str(target), {"a": 1})

    def failing_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(art.os, "replace", failing_replace)
    with pytest.raises(OSError, match="No space left"):
        art.write_json_atomic(str(target), {"a": 2, "big": "x" * 100000})
    assert target.read_text() == '{\n  "a": 1\n}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["data.json"]


def test_to_plain_converts_subclasses_for_yaml(tmp_path):
    class TaggedStr(str):
        pass

    class TaggedInt(int):
        pass

    path = art.write_yaml_atomic(str(tmp_path / "p.yaml"), {TaggedStr("k"): [TaggedInt(3), TaggedStr("v"), (1, 2)]})
    assert open(path).read() == "k:\n- 3\n- v\n- - 1\n  - 2\n"


def test_failure_file_accumulates(tmp_path):
    art.write_failure(str(tmp_path), "first error")
    art.write_failure(str(tmp_path), "second error")
    assert (tmp_path / "FAILURE").read_text() == "first error\nsecond error\n"


def test_find_artifact_dirs_orders_by_index_and_ignores_files(tmp_path):
    for name in ("010__host__capture_environment", "002__host__capture_environment", "003__other"):
        (tmp_path / name).mkdir()
    (tmp_path / "004__host__capture_environment").write_text("a file")
    found = art.find_artifact_dirs(str(tmp_path), "*__host__capture_environment")
    assert [os.path.basename(p) for p in found] == ["002__host__capture_environment", "010__host__capture_environment"]
    assert art.find_artifact_dirs(str(tmp_path / "absent"), "*") == []


def test_unwritable_parent_is_a_clear_error(tmp_path):
    if os.geteuid() == 0:
        target = "/proc/perfscale-cannot-exist"
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        target = str(locked / "child")
    with pytest.raises(errors.ArtifactError, match=re.escape("artifact directory %s: cannot be created" % target)):
        art.ensure_dir(target)


TEXT = st.text(st.characters(codec="utf-8"), max_size=80)
DOCUMENTS = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
                         lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
                         max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(DOCUMENTS)
def test_dump_yaml_reads_back_as_the_same_data(document):
    """(The pure-Python emitter does not always: it writes a NEL, U+0085, raw in a quoted scalar,
    which reads back as a space.)"""
    import yaml

    assert yaml.safe_load(art.dump_yaml(document)) == document


def test_dump_yaml_without_libyaml_uses_the_python_emitter(monkeypatch):
    import yaml

    monkeypatch.delattr(yaml, "CSafeDumper", raising=False)
    assert art.dump_yaml({"pods": [{"name": "a"}], "text": "line\nline"}) == "pods:\n- name: a\ntext: 'line\n\n  line'\n"
