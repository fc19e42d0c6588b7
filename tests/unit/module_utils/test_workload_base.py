"""The workload base (workloads/base.py): each helper, and a workload written with only what differs."""

import json
import os
import sys
from typing import Optional

import pydantic
import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import kpi as kpi_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import postprocess
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import workload as workload_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree
from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import base


def write(path, content):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), "w", encoding="utf-8") as handle:
        handle.write(content if isinstance(content, str) else json.dumps(content))


def make_point(directory, exit_code=0, **files):
    """A matrix point as the engine leaves it: settings, uuid, the given files, exit_code last."""
    write(directory / "settings.yaml", "size: 64\n")
    write(directory / ".uuid", directory.name)
    for name, content in files.items():
        write(directory / name.replace("__", "/"), content)
    write(directory / "exit_code", "%d\n" % exit_code)
    return directory


def context(point, artifacts=None, important=None):
    return results_tree.ParseContext(str(point), str(point.parent), artifacts or {},
                                     base.important_files() if important is None else important)


class Entry:
    def __init__(self, relative="run/000__point", results=None, settings=None):
        self.relative = relative.replace("/", os.sep)
        self.results = results if results is not None else {}
        self.settings = settings or {}


# --------------------------------------------------------------------------
# reading a point directory


@pytest.mark.parametrize("text, lines, expected", [
    (None, 20, None),
    ("", 20, None),
    ("  \n\n ", 20, None),
    ("one\ntwo\n", 20, "one\ntwo"),
    ("\n".join("l%d" % i for i in range(30)), 20, "\n".join("l%d" % i for i in range(10, 30))),
    ("a\nb\nc\n", 2, "b\nc"),
])
def test_a_tail_is_the_last_lines_of_the_stripped_text(text, lines, expected):
    assert base.tail(text, lines) == expected


def test_the_important_files_are_the_common_ones_then_what_the_workload_adds():
    assert base.important_files() == base.COMMON_IMPORTANT_FILES + ["stderr.log"]
    files = base.important_files("ENV/environment.json", "output.json", "RUN_INFO")
    assert files == base.COMMON_IMPORTANT_FILES + ["stderr.log", "ENV/environment.json", "RUN_INFO"]
    assert "stderr.log" not in base.important_files("RUN_INFO", stderr=False)
    for name in ("settings.yaml", "exit_code", ".uuid", "output.json", "point.json", "FAILURE"):
        assert name in base.COMMON_IMPORTANT_FILES


def test_a_point_that_did_not_fail_has_no_failure_and_its_stderr_is_not_read(tmp_path):
    point = make_point(tmp_path / "000__ok", **{"stderr.log": "noise\n", "point.json": {"duration_s": 2.5}})
    ctx = context(point)
    assert base.read_failure(ctx) == {"failure": None, "stderr_tail": None}
    assert "stderr.log" not in ctx.files_read
    # FAILURE was looked for: the cache is stale as soon as it appears
    assert "FAILURE" in ctx.files_read and ctx.files_read["FAILURE"] is None
    assert ctx.warnings == []


def test_a_point_with_a_failed_exit_code_gives_its_failure_and_the_tail_of_its_stderr(tmp_path):
    stderr = "\n".join("line %d" % i for i in range(50)) + "\n\n"
    point = make_point(tmp_path / "results" / "000__failed", exit_code=2, FAILURE="x" * 5000, **{"stderr.log": stderr})
    ctx = context(point)
    failure = base.read_failure(ctx)
    assert failure["failure"] == "x" * base.FAILURE_CHARS
    assert failure["stderr_tail"] == "\n".join("line %d" % i for i in range(30, 50))
    assert ctx.warnings == []
    # without stderr: no stderr_tail, the log is not read (nor warned about when not important)
    ctx = context(point, important=base.important_files(stderr=False))
    assert base.read_failure(ctx, stderr=False) == {"failure": "x" * base.FAILURE_CHARS}
    assert "stderr.log" not in ctx.files_read and ctx.warnings == []
    # the results tree reads the exit code itself
    workload = workload_lib.load_workload(str(minimal_workload(tmp_path)))
    entries, _warnings = results_tree.parse_results(str(tmp_path / "results"), workload, environ={}, write_cache=False)
    assert [(entry.exit_code, entry.failed, entry.results["failure"]) for entry in entries] == \
        [(2, True, "x" * base.FAILURE_CHARS)]


def test_a_failed_point_without_stderr_or_with_an_empty_failure(tmp_path):
    point = make_point(tmp_path / "000__failed", exit_code=1, FAILURE="")
    ctx = context(point)
    assert base.read_failure(ctx) == {"failure": None, "stderr_tail": None}
    assert [w.split(" (")[0] for w in ctx.warnings] == ["stderr.log: missing"]


def test_a_point_without_point_json_gives_an_empty_timing(tmp_path):
    point = make_point(tmp_path / "000__old")
    ctx = context(point)
    assert base.read_point(ctx) == {}
    assert ctx.warnings == [] and ctx.files_read["point.json"] is None
    ctx = context(point)
    assert base.read_point(ctx, warn_missing=True) == {}
    assert [w.split(" (")[0] for w in ctx.warnings] == ["point.json: missing"]


def test_point_json_gives_the_timing_and_a_malformed_one_nothing(tmp_path):
    timing = {"duration_s": 3.5, "started": "2024-01-01T00:00:00+00:00"}
    assert base.read_point(context(make_point(tmp_path / "000__a", **{"point.json": timing}))) == timing
    assert base.read_point(context(make_point(tmp_path / "001__b", **{"point.json": [1, 2]}))) == {}
    ctx = context(make_point(tmp_path / "002__c", **{"point.json": "{broken"}))
    assert base.read_point(ctx) == {}
    assert ctx.warnings and ctx.warnings[0].startswith("point.json: unreadable")


def test_an_optional_json_is_read_when_it_or_its_artifact_directory_is_there(tmp_path):
    point = make_point(tmp_path / "000__p", **{"output.json": {"a": 1}})
    env = tmp_path / "000__host__capture_environment"
    write(env / "environment.json", {"cpu": {"model": "x"}})
    ctx = context(point, artifacts={"ENV": str(env), "RUN_INFO": None},
                  important=base.important_files("ENV/environment.json", "ENV/other.json", "RUN_INFO", "missing.json"))
    assert base.read_optional_json(ctx, "output.json") == {"a": 1}
    assert base.read_optional_json(ctx, "missing.json") is None
    assert base.read_optional_json(ctx, "environment.json", artifact="ENV") == {"cpu": {"model": "x"}}
    assert base.read_optional_json(ctx, artifact="RUN_INFO") is None
    assert ctx.warnings == []
    # a file missing from a directory that was found is warned about
    assert base.read_optional_json(ctx, "other.json", artifact="ENV") is None
    assert [w.split(" (")[0] for w in ctx.warnings] == ["ENV/other.json: missing"]


def test_the_shapes_a_part_of_the_wrong_shape_reads_as_absent():
    assert base.mapping({"a": 1}) == {"a": 1}
    for value in (None, [1], "text", 3, True):
        assert base.mapping(value) == {} and base.listed(value if not isinstance(value, list) else None) == []
    assert base.listed([1, "a"]) == [1, "a"]
    document = {"cpu": {"model": "Xeon"}, "os": "linux", "gpus": [{"name": "x"}]}
    assert base.field(document, "cpu", "model") == "Xeon"
    assert base.field(document, "os", "hostname") is None
    assert base.field(document, "gpus", "name") is None
    assert base.field(document, "missing", "deeper") is None
    assert base.field(["not", "a", "mapping"], "cpu") is None
    assert base.field(document) is document


def test_a_json_object_of_the_test_is_a_dict_or_nothing_with_a_warning_naming_the_file(tmp_path):
    point = make_point(tmp_path / "000__p", **{"point.json": [1, 2], "labels.json": {"a": 1}})
    env = tmp_path / "000__host__capture_environment"
    write(env / "environment.json", "42")
    ctx = context(point, artifacts={"ENV": str(env)},
                  important=base.important_files("labels.json", "ENV/environment.json", "gone.json"))
    assert base.read_mapping(ctx, "labels.json") == {"a": 1}
    assert base.read_mapping(ctx, "point.json") == {}
    assert base.read_mapping(ctx, "environment.json", artifact="ENV") == {}
    assert base.read_mapping(ctx, "gone.json", optional=True) == {}
    assert ctx.warnings == ["point.json: expected a JSON object, got list; ignored",
                            "ENV/environment.json: expected a JSON object, got int; ignored"]
    assert base.read_mapping(ctx, "gone.json") == {}
    assert ctx.warnings[-1].startswith("gone.json: missing (")


def test_the_document_of_a_point_that_ran_is_output_json(tmp_path):
    document = {"name": "matmul", "@result": {"rate": 1.0}}
    ctx = context(make_point(tmp_path / "000__ok", **{"output.json": document}))
    assert base.read_document(ctx) == document and ctx.warnings == []
    # missing, or not an object: none, and a missing one is warned about once
    ctx = context(make_point(tmp_path / "001__none"))
    assert base.read_document(ctx) == {}
    assert [w.split(" (")[0] for w in ctx.warnings] == ["output.json: missing"]
    ctx = context(make_point(tmp_path / "002__list", **{"output.json": [document]}))
    assert base.read_document(ctx) == {} and ctx.warnings == []


def test_a_failed_point_has_no_document_unless_the_workload_reads_its_own_file(tmp_path):
    point = make_point(tmp_path / "000__failed", exit_code=3, FAILURE="boom",
                       **{"output.json": {"@result": {}}, "result.json": {"@result": {"rate": 2}}})
    ctx = context(point, important=base.important_files("result.json"))
    assert base.read_document(ctx) == {}
    assert "output.json" not in ctx.files_read  # not even looked at
    assert base.read_document(ctx, ("missing.json", "result.json"), failed_too=True) == {"@result": {"rate": 2}}
    assert ctx.warnings == []
    # a failed point without any document: nothing to warn about
    ctx = context(make_point(tmp_path / "001__failed", exit_code=3, FAILURE=""))
    assert base.read_document(ctx, ("output.json", "result.json"), failed_too=True) == {} and ctx.warnings == []


def test_the_first_usable_document_wins_and_a_malformed_one_is_warned_about_once(tmp_path):
    def usable(document):
        return isinstance(document.get("@result"), dict)

    point = make_point(tmp_path / "000__p", **{"output.json": {"name": "no result"}, "result.json": {"@result": {}}})
    ctx = context(point, important=base.important_files("result.json"))
    assert base.read_document(ctx, ("output.json", "result.json"), usable=usable) == {"@result": {}}
    assert ctx.warnings == []
    ctx = context(make_point(tmp_path / "001__p", **{"output.json": "{broken"}),
                  important=base.important_files("result.json"))
    assert base.read_document(ctx, ("output.json", "result.json"), failed_too=True, usable=usable) == {}
    assert len(ctx.warnings) == 1 and ctx.warnings[0].startswith("output.json: unreadable, ignored: not JSON")


def test_the_host_environment_and_its_identity_whatever_the_capture_holds(tmp_path):
    point = make_point(tmp_path / "000__p")
    env = tmp_path / "000__host__capture_environment"
    capture = {"os": {"hostname": "gpu-1", "pretty_name": "Fedora"}, "cpu": {"model": "Xeon"},
               "collection": {"version": "0.2.0", "git_commit": "abc"}}
    write(env / "environment.json", capture)
    ctx = context(point, artifacts={base.HOST_ENVIRONMENT: str(env)},
                  important=base.important_files("HOST_CAPTURE_ENVIRONMENT/environment.json"))
    environment = base.read_host_environment(ctx)
    assert environment == capture
    assert base.host_identity(environment) == {"hostname": "gpu-1", "collection_version": "0.2.0",
                                               "git_commit": "abc", "cpu_model": "Xeon"}
    assert base.host_identity({"os": "linux", "cpu": ["x"], "collection": None}) == {
        "hostname": None, "collection_version": None, "git_commit": None, "cpu_model": None}
    # no capture: nothing, warned about only when asked
    ctx = context(point, artifacts={base.HOST_ENVIRONMENT: None},
                  important=base.important_files("HOST_CAPTURE_ENVIRONMENT/environment.json"))
    assert base.read_host_environment(ctx) == {} and ctx.warnings == []
    assert base.read_host_environment(ctx, optional=False) == {}
    assert ctx.warnings == ["HOST_CAPTURE_ENVIRONMENT/environment.json: no HOST_CAPTURE_ENVIRONMENT directory found "
                            "for this test"]


def test_the_run_id_comes_from_run_json_whatever_it_holds(tmp_path):
    point = make_point(tmp_path / "000__p")
    cases = (({"run_id": "r-1"}, "r-1"), ([1], None), ({"other": 1}, None), ({"run_id": 7}, None))
    for index, (content, expected) in enumerate(cases):
        run_json = tmp_path / ("run-%d.json" % index)
        write(run_json, content)
        ctx = context(point, artifacts={base.RUN_INFO: str(run_json)}, important=base.important_files("RUN_INFO"))
        assert base.read_run_id(ctx) == expected
    assert ctx.warnings == []
    ctx = context(point, artifacts={base.RUN_INFO: str(tmp_path / "run-1.json")},
                  important=base.important_files("RUN_INFO"))
    base.read_run_id(ctx)
    assert ctx.warnings == ["RUN_INFO: expected a JSON object, got list; ignored"]
    ctx = context(point, artifacts={base.RUN_INFO: None}, important=base.important_files("RUN_INFO"))
    assert base.read_run_id(ctx) is None and ctx.warnings == []
    assert base.read_run_id(ctx, optional=False) is None
    assert ctx.warnings == ["RUN_INFO: no RUN_INFO directory found for this test"]


WRONG_SHAPES = {
    # the host's capture: sections that are not mappings, a list of GPUs that is not a list
    "environment": {"cpu": "x86", "os": ["linux"], "memory": 3, "collection": "0.2", "gpus": 7, "python": None},
    # the harness's document: parameters and result that are not mappings
    "output": {"name": "matmul", "@parameters": [1], "@result": {"stages": "all", "losses": 3, "warnings": "w"},
               "environment": "cpu"},
    "run": [1, 2],
}


@pytest.mark.parametrize("name", ["perf_indicators", "llm_load", "fine_tuning"])
def test_a_built_in_workload_reads_files_of_the_wrong_shape_as_absent_never_failing(tmp_path, name):
    """A tree from elsewhere (a bucket, an archive) whose files are JSON of another shape than the
    workload expects: every test is parsed and labelled, with a warning for what was ignored."""
    run = tmp_path / "results" / "run-1"
    write(run / "001__host__capture_environment" / "environment.json", WRONG_SHAPES["environment"])
    write(run / "run.json", WRONG_SHAPES["run"])
    make_point(run / "002__matbenchmarking" / "000__p",
               **{"output.json": WRONG_SHAPES["output"], "point.json": {"duration_s": 1.0}})
    workload = workload_lib.load_workload(name)
    entries, _warnings = results_tree.parse_results(str(tmp_path / "results"), workload, environ={}, write_cache=False)
    [entry] = entries
    assert entry.results["parameters"] == {}
    # run.json ignored: the run id comes from where the test is (parse_always)
    assert entry.results["run_id"] == "run-1"
    assert workload.kpi_labels(entry)["test_path"] == entry.relative
    workload.payload_results(entry)
    if name != "fine_tuning":
        host = entry.results["host"]
        assert (host["hostname"], host["cpu_model"], host["collection_version"]) == (None, None, None)
    if name == "perf_indicators":
        assert (entry.results["host"]["gpus"], entry.results["host"]["gpu_count"]) == ([], 0)
        assert entry.results["measurement"] == {}
        assert "RUN_INFO: expected a JSON object, got list; ignored" in entry.warnings
    if name == "llm_load":
        assert (entry.results["stages"], entry.results["warnings"]) == ([], [])
    if name == "fine_tuning":
        assert entry.results["losses"] == []


def test_the_llm_load_workload_warns_once_about_a_malformed_output_json(tmp_path):
    make_point(tmp_path / "results" / "run-1" / "000__p", **{"output.json": "{broken", "point.json": {}})
    workload = workload_lib.load_workload("llm_load")
    [entry], _warnings = results_tree.parse_results(str(tmp_path / "results"), workload, environ={}, write_cache=False)
    assert [w for w in entry.warnings if w.startswith("output.json")] == [
        "output.json: unreadable, ignored: not JSON: Expecting property name enclosed in double quotes: line 1 "
        "column 2 (char 1)"]


# --------------------------------------------------------------------------
# hooks


def test_parse_always_sets_the_test_path_and_a_run_id_from_it_when_the_parse_found_none():
    entry = Entry("run-3/001__matbenchmarking/000__p")
    base.parse_always(entry)
    assert entry.results == {"test_path": entry.relative, "run_id": "run-3"}
    entry = Entry("run-3/000__p", results={"run_id": "from-run-json"})
    base.parse_always(entry)
    assert entry.results["run_id"] == "from-run-json"
    entry = Entry("000__p")
    base.parse_always(entry)
    assert entry.results == {"test_path": "000__p", "run_id": "."}


def test_the_timestamp_is_when_the_test_started_or_none():
    assert base.timestamp(Entry(results={"started": "2024-01-01T00:00:00+00:00"})) == "2024-01-01T00:00:00+00:00"
    assert base.timestamp(Entry()) is None


# --------------------------------------------------------------------------
# labels


def test_a_setting_comes_from_the_parameters_first_then_the_settings():
    entry = Entry(results={"parameters": {"model": "m", "threads": None}},
                  settings={"model": "other", "threads": 4, "replicas": 2})
    setting = base.settings_reader(entry)
    assert (setting("model"), setting("threads"), setting("replicas"), setting("absent", 7)) == ("m", 4, 2, 7)
    setting = base.settings_reader(entry, none_is_unset=False)
    assert (setting("model"), setting("threads"), setting("replicas"), setting("absent", 7)) == ("m", None, 2, 7)
    assert base.settings_reader(Entry(settings={"a": 1}))("a") == 1


def test_the_labels_model_wraps_the_fields_between_the_version_and_where_the_test_is():
    model = base.labels_model(model=str, batch=Optional[int])
    assert list(model.model_fields) == ["kpi_settings_version", "model", "batch", "test_path", "run_id"]
    assert all(field.is_required() for field in model.model_fields.values())
    labels = {"kpi_settings_version": "1.0", "model": "m", "batch": None, "test_path": "a/b", "run_id": "a"}
    assert model.model_validate(labels).model_dump() == labels
    with pytest.raises(pydantic.ValidationError, match="extra"):
        model.model_validate(dict(labels, unknown=1))
    with pytest.raises(pydantic.ValidationError):
        model.model_validate({key: value for key, value in labels.items() if key != "batch"})
    with pytest.raises(pydantic.ValidationError):
        model.model_validate(dict(labels, model=None))


def test_the_raw_labels_are_the_version_the_workload_labels_then_where_the_test_is():
    entry = Entry(results={"test_path": "run/000__p", "run_id": "run"})
    labels = base.kpi_labels("2.0", entry, model="m", batch=4)
    assert list(labels.items()) == [("kpi_settings_version", "2.0"), ("model", "m"), ("batch", 4),
                                    ("test_path", "run/000__p"), ("run_id", "run")]


def test_the_summary_results_are_a_section_the_duration_and_counts():
    entry = Entry(results={"summary": {"a": 1}, "duration_s": 9.5, "losses": [1, 2, 3]})
    assert base.summary_results(entry, "summary", loss_records="losses", none="absent") == \
        {"a": 1, "duration_s": 9.5, "loss_records": 3, "none": 0}
    assert base.summary_results(Entry(), "summary") == {"duration_s": None}


# --------------------------------------------------------------------------
# KPIs


def test_a_kpi_declared_in_one_call_is_what_the_decorators_declare():
    rate = base.kpi("rate", "Median throughput", "GFLOP/s", "higher", fmt="{:.1f}",
                    error_bar=lambda payload: payload["results"]["rate"] * payload["results"]["time_cv"])
    time_median = base.kpi("time_median", "Median time", "s", "lower", view_of="rate", divisor=1e-3,
                           display_unit="ms", fmt="{:.3f}", error_bar="time_stdev")
    duration = base.kpi("point_duration", "Wall time", "s", "lower", ignored=True, key="duration_s")
    flag = base.kpi("client_bound", "1 when client-bound", "flag", "lower", fmt="{:.0f}",
                    value=lambda payload: int(bool(payload["results"]["client_bound"])))
    definitions = kpi_lib.collect_kpis([rate, time_median, duration, flag])
    assert [d.name for d in definitions] == ["rate", "time_median", "point_duration", "client_bound"]
    described = {d.name: d.describe() for d in definitions}
    assert described["rate"] == {"help": "Median throughput", "unit": "GFLOP/s", "higher_is_better": True,
                                 "ignored_for_regression": False, "view_of": None}
    assert described["time_median"]["view_of"] == "rate" and described["time_median"]["higher_is_better"] is False
    assert described["point_duration"]["ignored_for_regression"] is True
    by_name = {d.name: d for d in definitions}
    assert by_name["point_duration"].format == "{}"
    assert (by_name["time_median"].divisor, by_name["time_median"].display_unit) == (1e-3, "ms")
    payload = {"results": {"rate": 10.0, "time_cv": 0.1, "time_median": 0.002, "time_stdev": 0.0001,
                           "duration_s": 3.0, "client_bound": True}}
    values, warnings = kpi_lib.compute_kpis(definitions, payload)
    assert warnings == []
    assert {name: (kpi["value"], kpi["formatted"], kpi["error"]) for name, kpi in values.items()} == {
        "rate": (10.0, "10.0 GFLOP/s", 1.0), "time_median": (0.002, "2.000 ms", 0.0001),
        "point_duration": (3.0, "3.0 s", None), "client_bound": (1, "1 flag", None)}


def test_a_kpi_whose_value_is_missing_warns_like_a_decorated_one():
    definitions = kpi_lib.collect_kpis([base.kpi("send_lag_p99", "Send lag", "ms", "lower", key="send_lag_p99_ms")])
    values, warnings = kpi_lib.compute_kpis(definitions, {"results": {}})
    assert values["send_lag_p99"]["value"] is None
    assert warnings == ["KPI send_lag_p99: KeyError: 'send_lag_p99_ms'"]


def test_a_kpi_needs_a_direction():
    with pytest.raises(ValueError, match="better must be 'higher' or 'lower'"):
        base.kpi("rate", "Rate", "GFLOP/s", "up")


# --------------------------------------------------------------------------
# a workload written with only what differs

MINIMAL_WORKLOAD = '''
from typing import Optional

from ansible_collections.perfscale.topsail.plugins.module_utils.workloads import base

KPI_SETTINGS_VERSION = "1.0"
IMPORTANT_FILES = base.important_files()
parse_always = base.parse_always
timestamp = base.timestamp


def parse_once(ctx, settings):
    results = base.read_failure(ctx)
    output = ctx.read_json("output.json") if not results["failure"] else None
    point = base.read_point(ctx)
    results.update(result=(output or {}).get("@result") or {}, started=point.get("started"),
                   duration_s=point.get("duration_s"))
    return results


def labels_model():
    return base.labels_model(size=Optional[int])


def kpi_labels(entry):
    return base.kpi_labels(KPI_SETTINGS_VERSION, entry, size=base.settings_reader(entry)("size"))


def payload_results(entry):
    return base.summary_results(entry, "result")


KPIS = [base.kpi("rate", "Median throughput", "GFLOP/s", "higher", fmt="{:.1f}")]
'''


def minimal_workload(directory):
    path = directory / "minimal_workload.py"
    path.write_text(MINIMAL_WORKLOAD)
    return path


def test_a_workload_with_only_what_differs_loads_and_yields_kpis(tmp_path):
    root = tmp_path / "results" / "run-1"
    make_point(root / "000__ok", **{"output.json": {"@result": {"rate": 12.5}},
                                    "point.json": {"started": "2024-05-01T00:00:00+00:00", "duration_s": 4.0}})
    make_point(root / "001__failed", exit_code=3, FAILURE="harness exited with 3\n", **{"stderr.log": "boom\n"})
    workload = workload_lib.load_workload(str(minimal_workload(tmp_path)))
    assert os.path.abspath(base.__file__) in workload.source_files()
    labels_model = workload.labels_model()
    entries, _warnings = results_tree.parse_results(str(tmp_path / "results"), workload, environ={})
    payloads = {}
    for entry in entries:
        payloads[entry.relative] = postprocess.build_payload(entry, workload, labels_model, strict=True)[0]
    ok = payloads[os.path.join("run-1", "000__ok")]
    assert ok["kpis"]["rate"]["value"] == 12.5 and ok["kpis"]["rate"]["formatted"] == "12.5 GFLOP/s"
    assert ok["labels"] == {"kpi_settings_version": "1.0", "size": 64, "test_path": os.path.join("run-1", "000__ok"),
                            "run_id": "run-1"}
    assert ok["metadata"]["timestamp"] == "2024-05-01T00:00:00+00:00"
    assert ok["results"] == {"rate": 12.5, "duration_s": 4.0}
    failed = payloads[os.path.join("run-1", "001__failed")]
    assert failed["kpis"] == {} and failed["metadata"]["exit_code"] == 3
    failed_entry = [entry for entry in entries if entry.failed][0]
    assert (failed_entry.results["failure"], failed_entry.results["stderr_tail"]) == ("harness exited with 3\n", "boom")
    assert all(entry.warnings == [] for entry in entries)


@pytest.mark.parametrize("name", ["perf_indicators", "llm_load", "fine_tuning"])
def test_the_base_is_part_of_the_cache_key_of_every_built_in_workload(name):
    assert os.path.abspath(base.__file__) in workload_lib.load_workload(name).source_files()


def test_a_workload_named_by_data_resolves_only_against_the_built_in_ones_and_the_configurations(tmp_path,
                                                                                                 monkeypatch):
    assert workload_lib.load_workload_named_by_data("perf_indicators").name == "perf_indicators"
    path = str(minimal_workload(tmp_path))
    assert workload_lib.load_workload_named_by_data(path, trusted=[path]).name == path
    for name in ("this", "os.path", path, "perf_indicators.py"):
        monkeypatch.delitem(sys.modules, name, raising=False)
        with pytest.raises(errors.WorkloadError) as refused:
            workload_lib.load_workload_named_by_data(name, trusted=["team.workload"], source="an artifact")
        assert str(refused.value) == (
            "workload %r named by an artifact: not loaded, neither a built-in workload (fine_tuning, llm_load, "
            "perf_indicators) nor one the configuration names (team.workload); a name from data never imports or "
            "runs code" % name)
    assert "this" not in sys.modules
    with pytest.raises(errors.WorkloadError, match=r"^workload of type list named by a stored document: not loaded, "):
        workload_lib.load_workload_named_by_data(["perf_indicators"])
    with pytest.raises(errors.WorkloadError, match=r"^workload 'x{200}\.\.\.' named by"):
        workload_lib.load_workload_named_by_data("x" * 500)
