import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import verdicts as ra
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base as stores_base
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.sqlite import SQLiteStore

SECTION = {"enabled": True, "method": "edivisive", "fail_test_on_regression": True, "short_history_threshold": 0.1,
           "fail_on_persisting": False, "require_history": False, "compare_across_machines": False,
           "machine_keys": None, "short_history_max_pvalue": 0.01, "noise": {"max_spread": 0.1, "max_load_per_cpu": 0.75, "baseline": "prefer_quiet"},
           "options": {}, "comparison_keys": None, "ignored_keys": None, "sorting_keys": None, "ignored_entries": None}
WORKLOAD = {"comparison_keys": ["version"], "ignored_keys": ["test_path", "run_id"], "sorting_keys": ["size"],
            "ignored_entries": {}}


def kpis(rate, time_median):
    return {
        "rate": {"value": rate, "unit": "GFLOP/s", "help": "r", "higher_is_better": True, "ignored_for_regression": False},
        "time_median": {"value": time_median, "unit": "s", "help": "t", "higher_is_better": False,
                        "ignored_for_regression": False},
        "time_cv": {"value": 0.5, "unit": "ratio", "help": "cv", "higher_is_better": False, "ignored_for_regression": True},
    }


def payload(uuid, size, rate, time_median, version="9.0", exit_code=0):
    labels = {"indicator": "matmul", "size": size, "version": version, "test_path": "run/%s" % uuid}
    return {"metadata": {"test_uuid": uuid, "timestamp": "2026-11-22T10:00:00+00:00", "test_path": "run/%s" % uuid,
                         "exit_code": exit_code},
            "labels": labels, "kpis": kpis(rate, time_median) if exit_code == 0 else {}}


@pytest.fixture
def store(tmp_path):
    store = SQLiteStore(tmp_path / "history.sqlite")
    store.ensure_schema()
    documents = []
    for day in range(1, 21):
        for size, rate in ((256, 100.0), (512, 200.0)):
            for name, value in (("rate", rate * (1 + 0.005 * (day % 3))), ("time_median", 1.0 / rate)):
                documents.append(stores_base.kpi_document({
                    "indicator": "matmul", "size": size, "version": "1.%d" % (day // 5), "test_path": "old/%d" % day,
                    "kpi_name": name, "value": value, "unit": "x", "higher_is_better": name == "rate",
                    "ignored_for_regression": False, "test_uuid": "d%d-%d" % (day, size), "workload": "w",
                    "@timestamp": "2026-11-%02dT10:00:00+00:00" % day}))
    store.write(documents)
    yield store
    store.close()


def settings(**changes):
    section = dict(SECTION, **changes)
    return ra.effective_settings(section, WORKLOAD)


def test_regressions_and_improvements_against_history_across_versions(store):
    payloads = [payload("new-256", 256, 70.0, 1 / 70.0), payload("new-512", 512, 260.0, 1 / 260.0),
                payload("failed", 1024, None, None, exit_code=3)]
    summary, records, details = ra.analyse(payloads, store, settings(), "w")
    assert summary["entries_analysed"] == 2 and summary["kpis_analysed"] == 4
    assert [(r["test"], r["kpi"]) for r in summary["regressions"]] == [("run/new-256", "rate"), ("run/new-256", "time_median")]
    assert [(r["test"], r["kpi"]) for r in summary["improvements"]] == [("run/new-512", "rate"), ("run/new-512", "time_median")]
    assert all(r["history_points"] == 20 for r in summary["regressions"])
    assert summary["not_analysed"] == [{"test": "run/failed", "reason": "no KPI values (failed test: exit code 3)"}]
    assert [d["test"] for d in details] == ["run/new-256", "run/new-512"]  # sorting_keys: size
    assert len(records) == 4 and {r["verdict"] for r in records} == {"regression", "improvement"}
    assert all(r["kind"] == "regression" and r["doc_id"] for r in records)
    assert "2 regression(s), 0 persisting regression(s), 2 improvement(s)" in summary["message"]
    assert summary["fail_test"] and summary["fail_reasons"] == ["2 new regression(s)"]


def test_a_label_that_is_not_compared_or_ignored_separates_histories(store):
    summary, _records, _details = ra.analyse([payload("new", 128, 70.0, 1 / 70.0)], store, settings(), "w")
    assert [n["kpi"] for n in summary["not_enough_history"]] == ["rate", "time_median"]
    assert summary["regressions"] == []


def test_without_the_comparison_key_history_is_only_the_same_version(store):
    summary, _records, _details = ra.analyse([payload("new", 256, 70.0, 1 / 70.0, version="1.2")], store,
                                             settings(comparison_keys=[]), "w")
    assert all(r["history_points"] == 5 for r in summary["regressions"])


def test_ignored_entries_are_not_analysed(store):
    summary, records, _details = ra.analyse([payload("new", 256, 70.0, 1 / 70.0)], store,
                                            settings(ignored_entries={"size": [256]}), "w")
    assert summary["entries_analysed"] == 0 and records == []
    assert summary["not_analysed"] == [{"test": "run/new", "reason": "size=256 is in regression.ignored_entries"}]


def test_unknown_method_options_are_refused():
    with pytest.raises(errors.RegressionError, match="regression.options: unknown method"):
        ra.effective_settings(dict(SECTION, options={"hunter": {}}), WORKLOAD)
    with pytest.raises(errors.RegressionError, match="has no option"):
        ra.effective_settings(dict(SECTION, options={"edivisive": {"alpha": 1}}), WORKLOAD)


def test_history_unavailable_summary_says_why():
    summary = ra.history_unavailable([payload("a", 256, 1.0, 1.0)], settings(), "connection refused")
    assert summary["entries_analysed"] == 0
    assert summary["not_analysed"][0]["reason"] == "history unavailable: connection refused"


def test_entries_are_reported_in_sorting_key_order_numbers_by_value(tmp_path):
    empty = SQLiteStore(tmp_path / "empty.sqlite")
    empty.ensure_schema()
    sizes = [3, -1, None, -2, 10]
    payloads = [payload("s%d" % i, size, 1.0, 1.0) for i, size in enumerate(sizes)]
    _summary, _records, details = ra.analyse(payloads, empty, settings(), "w")
    assert [d["labels"]["size"] for d in details] == [-2, -1, 3, 10, None]
    empty.close()


def test_a_view_takes_its_primary_kpis_verdict_and_is_not_counted_twice(store):
    new = payload("new-256", 256, 70.0, 1 / 70.0)
    new["kpis"]["time_median"]["view_of"] = "rate"
    summary, records, details = ra.analyse([new], store, settings(), "w")
    assert [(r["kpi"], r["verdict"]) for r in summary["regressions"]] == [("rate", "regression")]
    assert summary["kpis_analysed"] == 1
    shown = {k["name"]: k for k in details[0]["kpis"]}
    assert shown["time_median"]["verdict"] == "regression" and shown["time_median"]["view_of"] == "rate"
    assert {r["kpi_name"]: r["verdict"] for r in records} == {"rate": "regression", "time_median": "regression"}


def history_documents(size, values, run="h", noisy=()):
    return [stores_base.kpi_document({
        "indicator": "matmul", "size": size, "version": "9.0", "test_path": "old/%d" % day, "kpi_name": "rate",
        "value": value, "unit": "x", "higher_is_better": True, "ignored_for_regression": False,
        "test_uuid": "%s%d" % (run, day), "workload": "w", "run_id": "%s-run-%d" % (run, day),
        "noisy": day in noisy, "@timestamp": "2026-10-%02dT10:00:00+00:00" % (day + 1)}) for day, value in enumerate(values)]


def test_noisy_and_forgotten_runs_stay_out_of_the_baseline(tmp_path):
    store = SQLiteStore(tmp_path / "h.sqlite")
    store.ensure_schema()
    # 12 steady runs at 100, then two at 60: one noisy, one forgotten by hand
    store.write(history_documents(64, [100.0] * 12 + [60.0, 60.0], noisy=(12,)))
    store.write([stores_base.mark_document("h-run-13", True, "bad node")])
    summary, _records, details = ra.analyse([payload("new", 64, 100.5, 1 / 100.5)], store, settings(), "w")
    rate = next(k for k in details[0]["kpis"] if k["name"] == "rate")
    assert rate["verdict"] == "no_change" and rate["evidence"]["history_points"] == 12
    assert summary["excluded_from_baselines"] == {"noisy": 1, "forgotten": 1}
    # marks are reversible: the run comes back
    store.write([stores_base.mark_document("h-run-13", False, "it was fine")])
    summary, _records, details = ra.analyse([payload("new", 64, 100.5, 1 / 100.5)], store, settings(), "w")
    assert summary["excluded_from_baselines"] == {"noisy": 1, "forgotten": 0}
    store.close()


def test_a_noisy_run_is_flagged_and_its_regression_does_not_fail_the_gate(store):
    new = payload("new-256", 256, 70.0, 1 / 70.0)
    new["metadata"]["noise"] = ["repetitions spread 0.300 > 0.100"]
    summary, records, _details = ra.analyse([new], store, settings(), "w")
    assert summary["noisy_entries"] == [{"test": "run/new-256", "reasons": ["repetitions spread 0.300 > 0.100"]}]
    assert summary["regressions"] and all(r["noisy"] for r in summary["regressions"])
    assert summary["fail_test"] is False and all(r["noisy"] for r in records)


def test_machine_labels_separate_histories_unless_told_to_compare_across_machines(tmp_path):
    store = SQLiteStore(tmp_path / "h.sqlite")
    store.ensure_schema()
    store.write([dict(d, cpu_model="other cpu") for d in history_documents(64, [100.0] * 12)])
    new = payload("new", 64, 70.0, 1 / 70.0)
    new["labels"]["cpu_model"] = "this cpu"
    workload = dict(WORKLOAD, machine_keys=["cpu_model"])
    summary, _r, _d = ra.analyse([new], store, ra.effective_settings(dict(SECTION), workload), "w")
    assert summary["regressions"] == [] and summary["kpis_with_history"] == 0
    across = ra.effective_settings(dict(SECTION, compare_across_machines=True), workload)
    summary, _r, _d = ra.analyse([new], store, across, "w")
    assert [r["kpi"] for r in summary["regressions"]] == ["rate"]
    store.close()


def test_the_gate_can_require_history_and_fail_on_persisting_regressions(tmp_path):
    store = SQLiteStore(tmp_path / "h.sqlite")
    store.ensure_schema()
    summary, _r, _d = ra.analyse([payload("new", 64, 100.0, 0.01)], store, settings(require_history=True), "w")
    assert summary["fail_test"] and summary["fail_reasons"] == ["no KPI has any history (regression.require_history)"]
    store.write(history_documents(64, [100.0] * 12 + [60.0]))
    lenient, _r, _d = ra.analyse([payload("new", 64, 61.0, 1 / 61.0)], store, settings(), "w")
    assert [r["kpi"] for r in lenient["persisting_regressions"]] == ["rate"] and not lenient["fail_test"]
    assert lenient["persisting_regressions"][0]["since"]["run_id"] == "h-run-12"
    strict, _r, _d = ra.analyse([payload("new", 64, 61.0, 1 / 61.0)], store, settings(fail_on_persisting=True), "w")
    assert strict["fail_test"] and strict["fail_reasons"] == ["1 persisting regression(s)"]
    store.close()


def error_documents(values):
    return [stores_base.kpi_document({
        "indicator": "matmul", "size": 64, "version": "9.0", "test_path": "old/%d" % day, "kpi_name": "errors",
        "value": value, "unit": "count", "higher_is_better": False, "ignored_for_regression": False,
        "test_uuid": "e%d" % day, "workload": "w", "run_id": "e-run-%d" % day,
        "@timestamp": "2026-10-%02dT10:00:00+00:00" % (day + 1)}) for day, value in enumerate(values)]


def error_payload(count):
    found = payload("new", 64, 100.0, 0.01)
    found["kpis"] = {"errors": {"value": count, "unit": "count", "help": "errors", "higher_is_better": False,
                                "ignored_for_regression": False}}
    return found


@pytest.mark.parametrize("history_length", [3, 20])   # short history, and enough for the method
def test_a_rise_from_an_all_zero_history_is_judged_by_its_absolute_change_and_stays_strict_json(tmp_path,
                                                                                                history_length):
    import json

    from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import reports

    store = SQLiteStore(tmp_path / "h.sqlite")
    store.ensure_schema()
    store.write(error_documents([0] * history_length))
    summary, records, details = ra.analyse([error_payload(3)], store, settings(), "w")
    store.close()
    assert [r["kpi"] for r in summary["regressions"]] == ["errors"] and summary["fail_test"]
    line = summary["regressions"][0]
    assert line["absolute_change"] == 3 and "relative_change" not in line
    assert line["undefined"]["relative_change"] == "its base is 0 (a rise from 0): judged by the absolute change"
    assert records[0]["relative_change"] is None and records[0]["absolute_change"] == 3
    assert "relative_change" in records[0]["undefined"]
    # strict JSON all the way: the records, the summary and the details
    json.dumps([summary, records, details], allow_nan=False)
    _title, html = reports.regression_report(summary, details)
    assert "+3 (absolute; from 0)" in html and "relative change undefined: its base is 0" in html


def test_an_all_zero_history_and_a_zero_value_is_no_change(tmp_path):
    store = SQLiteStore(tmp_path / "h.sqlite")
    store.ensure_schema()
    store.write(error_documents([0] * 20))
    summary, records, _details = ra.analyse([error_payload(0)], store, settings(), "w")
    store.close()
    assert records[0]["verdict"] == "no_change" and records[0]["relative_change"] == 0.0 and not summary["fail_test"]


# --------------------------------------------------------------------------
# evidence: short histories, noisy runs, why a KPI has no history


def history_store(tmp_path, values, noisy=(), **labels):
    store = SQLiteStore(tmp_path / "h.sqlite")
    store.ensure_schema()
    store.write([dict(d, **labels) for d in history_documents(64, values, noisy=noisy)])
    return store


def test_a_short_history_that_varies_twofold_gives_an_inconclusive_verdict_naming_why(tmp_path):
    # the case a user saw: two runs 2x apart, the third 16 % below their mean was "a new regression (p = 0.84)"
    store = history_store(tmp_path, [60.0, 120.0])
    summary, records, _details = ra.analyse([payload("new", 64, 75.7, 1 / 75.7)], store, settings(), "w")
    store.close()
    assert summary["regressions"] == [] and not summary["fail_test"]
    line = summary["inconclusive"][0]
    assert line["kpi"] == "rate" and line["inconclusive_reason"] == "noise" and line["leaning"] == "regression"
    assert line["pvalue"] > 0.5 and line.get("runs_needed") is None
    assert "within the spread of 2 history points" in line["why"] and "would not decide it" in line["why"]
    assert records[0]["verdict"] == "inconclusive" and records[0]["why"] == line["why"]
    assert "1 inconclusive" in summary["message"]


def test_one_history_point_is_too_short_to_know_its_spread(tmp_path):
    store = history_store(tmp_path, [100.0])
    summary, _records, _details = ra.analyse([payload("new", 64, 80.0, 1 / 80.0)], store, settings(), "w")
    store.close()
    line = summary["inconclusive"][0]
    assert line["inconclusive_reason"] == "short_history" and line["runs_needed"] == 2
    assert "whose spread is unknown" in line["why"]
    # below the magnitude threshold it is no change, whatever the spread
    assert ra.judge([{"value": 100.0}], 95.0, True, "edivisive", settings()["method_options"], 0.1)[0] == "no_change"


@pytest.mark.parametrize("count, change", [(2, 0.3), (3, 0.2), (4, 0.2)])
def test_the_runs_needed_are_the_runs_that_decide_at_the_same_spread(count, change):
    """After ``runs_needed`` more runs with the history's mean and spread the verdict is decided,
    one run fewer it is not."""
    import statistics

    base = [100.0 + (5.0 if i % 2 else -5.0) for i in range(count)]
    if count % 2:
        base[-1] = 100.0
    mean, stdev = statistics.fmean(base), statistics.stdev(base)
    current = mean * (1 - change)
    options = settings()["method_options"]
    verdict, evidence = ra.judge([{"value": v} for v in base], current, True, "edivisive", options, 0.1, 0.01)
    assert verdict == "inconclusive" and evidence["runs_needed"] > 0

    def history_of(points):
        # ``points`` values with exactly this mean and sample standard deviation
        half = points // 2
        offsets = [1.0] * half + [-1.0] * half + ([0.0] if points % 2 else [])
        scale = stdev / statistics.stdev(offsets)
        return [{"value": mean + scale * o} for o in offsets]

    decided = ra.judge(history_of(count + evidence["runs_needed"]), current, True, "edivisive",
                       dict(options, min_size=1000), 0.1, 0.01)
    assert decided[0] == "regression"
    if evidence["runs_needed"] > 1:
        still = ra.judge(history_of(count + evidence["runs_needed"] - 1), current, True, "edivisive",
                         dict(options, min_size=1000), 0.1, 0.01)
        assert still[0] == "inconclusive"


def test_on_a_runner_where_every_run_is_noisy_kpis_are_still_compared_and_the_gate_can_fail(tmp_path):
    # every stored run noisy (a shared CI runner), steady enough to judge a 30 % drop
    store = history_store(tmp_path, [100.0, 101.0, 99.5, 100.5], noisy=range(4))
    new = payload("new", 64, 70.0, 1 / 70.0)
    new["metadata"].update(noise=["host load 1.80 per CPU > 0.75"], noise_measures={"spread": 0.02, "load_per_cpu": 1.8})
    summary, records, details = ra.analyse([new], store, settings(), "w")
    assert summary["kpis_with_history"] == 1 and summary["baselines_with_noisy_runs"] == 1
    line = summary["regressions"][0]
    assert line["baseline_noisy_points"] == 4 and line["uncertainty"] == {"spread": 0.02, "load_per_cpu": 1.8}
    # judged against noisy runs as noisy as itself: the regression fails the gate
    assert summary["fail_test"] and summary["fail_reasons"] == ["1 new regression(s)"]
    rate = next(r for r in records if r["kpi_name"] == "rate")
    assert rate["baseline_policy"] == "prefer_quiet" and rate["baseline_noisy_points"] == 4
    assert rate["repetition_spread"] == 0.02 and rate["host_load_per_cpu"] == 1.8
    words = "baselines prefer_quiet (noisy runs enter a baseline only where there are too few quiet ones): 1 with"
    assert words in summary["message"]
    from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import reports

    _title, html = reports.regression_report(summary, details)
    assert words in html and "repetitions spread 0.020, host load 1.80 per CPU" in html
    # quiet_only: the same history is no baseline, and the summary says why
    quiet = ra.effective_settings(dict(SECTION, noise=dict(SECTION["noise"], baseline="quiet_only")), WORKLOAD)
    summary, _records, _details = ra.analyse([new], store, quiet, "w")
    store.close()
    assert summary["kpis_with_history"] == 0 and summary["without_history"]["noisy"] == 1
    assert "2 KPI(s) without history (1 none stored, 1 only noisy runs, left out)" in summary["message"]


def test_a_noisy_run_against_quiet_runs_is_reported_not_failed(tmp_path):
    store = history_store(tmp_path, [100.0, 101.0, 99.5, 100.5, 100.2, 99.8, 100.1])
    new = payload("new", 64, 70.0, 1 / 70.0)
    new["metadata"]["noise"] = ["repetitions spread 0.300 > 0.100"]
    summary, _records, _details = ra.analyse([new], store, settings(), "w")
    store.close()
    assert [r["kpi"] for r in summary["regressions"]] == ["rate"] and not summary["fail_test"]
    assert "baseline_noisy_points" not in summary["regressions"][0]


def test_the_summary_says_why_kpis_have_no_history(tmp_path):
    store = history_store(tmp_path, [100.0] * 3, cpu_model="other cpu")
    new = payload("new", 64, 100.0, 0.01)
    new["labels"]["cpu_model"] = "this cpu"
    workload = dict(WORKLOAD, machine_keys=["cpu_model"])
    summary, records, _d = ra.analyse([new, payload("fresh", 32, 1.0, 1.0)], store,
                                      ra.effective_settings(dict(SECTION), workload), "w")
    store.close()
    # rate of "new" has history on another machine only; its time_median and "fresh" have none
    assert summary["without_history"] == {"none": 3, "noisy": 0, "forgotten": 0, "other_machine": 1}
    assert ("0 KPI(s) of 2 entries compared (edivisive): 0 regression(s), 0 persisting regression(s), "
            "0 improvement(s), 0 inconclusive, 0 no change; 4 KPI(s) without history (3 none stored, "
            "1 only on other machines)") in summary["message"]
    assert {r["no_history_reason"] for r in records if r["kpi_name"] == "rate"} == {"other_machine", "none"}


def test_keep_in_baseline_is_the_older_spelling_of_the_baseline_policy():
    from ansible_collections.perfscale.topsail.plugins.module_utils.config import schema

    model = schema.regression_model()
    assert model.model_validate({"noise": {"keep_in_baseline": True}}).noise.baseline == "all"
    assert model.model_validate({"noise": {"keep_in_baseline": False}}).noise.baseline == "quiet_only"
    assert model.model_validate({}).noise.baseline == "prefer_quiet"
    # config.yaml spells the default out; an override of the older key still takes
    assert model.model_validate({"noise": {"baseline": "prefer_quiet", "keep_in_baseline": True}}).noise.baseline == "all"
    with pytest.raises(Exception, match="keep_in_baseline .* and baseline .* disagree"):
        model.model_validate({"noise": {"keep_in_baseline": True, "baseline": "quiet_only"}})
    with pytest.raises(Exception, match="prefer_quiet"):
        model.model_validate({"noise": {"baseline": "sometimes"}})
