import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import baselines
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
            "0 improvement(s), 0 drift(s), 0 inconclusive, 0 no change; 4 KPI(s) without history (3 none stored, "
            "1 only on other machines)") in summary["message"]
    assert {r["no_history_reason"] for r in records if r["kpi_name"] == "rate"} == {"other_machine", "none"}


def test_keep_in_baseline_is_the_older_spelling_of_the_baseline_policy():
    from ansible_collections.perfscale.topsail.plugins.module_utils.regression import section

    model = section.regression_model()
    assert model.model_validate({"noise": {"keep_in_baseline": True}}).noise.baseline == "all"
    assert model.model_validate({"noise": {"keep_in_baseline": False}}).noise.baseline == "quiet_only"
    assert model.model_validate({}).noise.baseline == "prefer_quiet"
    # config.yaml spells the default out; an override of the older key still takes
    assert model.model_validate({"noise": {"baseline": "prefer_quiet", "keep_in_baseline": True}}).noise.baseline == "all"
    with pytest.raises(Exception, match="keep_in_baseline .* and baseline .* disagree"):
        model.model_validate({"noise": {"keep_in_baseline": True, "baseline": "quiet_only"}})
    with pytest.raises(Exception, match="prefer_quiet"):
        model.model_validate({"noise": {"baseline": "sometimes"}})


# --------------------------------------------------------------------------
# settings, directions and the points a report names


def test_settings_take_the_workloads_keys_unless_the_section_sets_them():
    workload = {"comparison_keys": ["version"], "machine_keys": ["cpu_model"]}
    section = dict(SECTION, ignored_keys=["host"], sorting_keys=[])
    effective = ra.effective_settings(section, workload)
    assert effective["comparison_keys"] == ["version"] and effective["machine_keys"] == ["cpu_model"]
    # set in the section (even empty): the section wins
    assert effective["ignored_keys"] == ["host"] and effective["sorting_keys"] == []
    # neither sets it: empty
    assert effective["ignored_entries"] == {}
    # the section is not changed
    assert section["comparison_keys"] is None and "method_options" not in section


def test_settings_default_every_key_when_the_workload_has_none():
    effective = ra.effective_settings(dict(SECTION), {})
    assert {key: effective[key] for key in ("comparison_keys", "ignored_keys", "sorting_keys", "ignored_entries",
                                            "machine_keys")} == {"comparison_keys": [], "ignored_keys": [],
                                                                 "sorting_keys": [], "ignored_entries": {},
                                                                 "machine_keys": []}


def test_method_options_are_the_methods_defaults_updated_with_its_own_section():
    assert settings()["method_options"] == {"window": 10, "max_pvalue": 0.0001, "newest_max_pvalue": 0.001,
                                            "min_magnitude": 0.02, "min_size": 3}
    tuned = settings(options={"edivisive": {"window": 5}, "zscore": {"threshold": 4}})
    assert tuned["method_options"]["window"] == 5 and tuned["method_options"]["min_size"] == 3
    zscore = settings(method="zscore", options={"zscore": {"threshold": 4}, "edivisive": {"window": 5}})
    assert zscore["method_options"] == {"threshold": 4.0, "min_history": 12, "min_magnitude": 0.02, "confirm": 3}


def test_unknown_methods_are_named_sorted_with_the_known_ones():
    with pytest.raises(errors.RegressionError) as raised:
        ra.effective_settings(dict(SECTION, options={"otava": {}, "hunter": {}, "zscore": {}}), WORKLOAD)
    assert str(raised.value) == "regression.options: unknown method(s) hunter, otava; methods: edivisive, linear_segments, relative, zscore"


@pytest.mark.parametrize("change, higher_is_better, verdict", [
    (0.0, True, "no_change"), (0.0, False, "no_change"),
    (0.1, True, "improvement"), (-0.1, True, "regression"),
    (0.1, False, "regression"), (-0.1, False, "improvement"),
    (1e-9, True, "improvement"), (-1e-9, False, "improvement"),
])
def test_direction_decides_between_regression_and_improvement(change, higher_is_better, verdict):
    assert ra.direction_verdict(change, higher_is_better) == verdict


HISTORY_POINTS = [{"@timestamp": "t%d" % i, "run_id": "r%d" % i, "git_commit": "c%d" % i, "test_uuid": "u%d" % i,
                   "value": 1.0} for i in range(3)]


@pytest.mark.parametrize("index, expected", [
    (0, {"timestamp": "t0", "run_id": "r0", "git_commit": "c0", "test_uuid": "u0"}),
    (2, {"timestamp": "t2", "run_id": "r2", "git_commit": "c2", "test_uuid": "u2"}),
    (3, {"timestamp": None, "run_id": None, "git_commit": None, "test_uuid": None}),
    (-1, {"timestamp": None, "run_id": None, "git_commit": None, "test_uuid": None}),
])
def test_a_point_names_the_run_at_its_index_and_nothing_outside_the_history(index, expected):
    assert ra._point(HISTORY_POINTS, index) == expected


# --------------------------------------------------------------------------
# the current value against a baseline


def prediction_pvalue(values, current):
    """Reference: the two-sided prediction t-test of docs/regression.md, with scipy.stats."""
    import statistics

    from scipy import stats

    n, mean, stdev = len(values), statistics.fmean(values), statistics.stdev(values)
    t = abs(current - mean) / (stdev * (1 + 1.0 / n) ** 0.5)
    return 2 * stats.t.sf(t, n - 1)


def test_the_evidence_against_a_baseline_has_change_pvalue_and_effect_size():
    evidence = ra._against([1.0, 2.0, 3.0], 5.0)
    assert evidence["baseline_mean"] == 2.0 and evidence["baseline_points"] == 3
    assert evidence["absolute_change"] == 3.0 and evidence["relative_change"] == 1.5
    assert evidence["baseline_stdev"] == 1.0 and evidence["effect_size"] == 3.0
    assert evidence["pvalue"] == pytest.approx(prediction_pvalue([1.0, 2.0, 3.0], 5.0), rel=1e-9)


def test_a_one_point_baseline_has_no_spread_pvalue_or_effect_size():
    assert ra._against([4.0], 2.0) == {"baseline_mean": 4.0, "baseline_points": 1, "absolute_change": -2.0,
                                       "relative_change": -0.5}


@pytest.mark.parametrize("current, effect_size", [(2.0, 0.0), (3.0, None)])
def test_a_baseline_that_never_varied_has_an_effect_size_only_for_no_change(current, effect_size):
    evidence = ra._against([2.0, 2.0], current)
    assert evidence["baseline_stdev"] == 0.0 and evidence["effect_size"] == effect_size


# --------------------------------------------------------------------------
# how many more runs would decide


def test_a_history_that_never_varied_needs_no_more_runs():
    assert ra.runs_to_decide([5.0, 5.0, 5.0], 6.0, 0.01) == 0


@pytest.mark.parametrize("values, current, max_pvalue", [
    ([95.0, 105.0], 80.0, 0.01), ([95.0, 105.0, 100.0], 85.0, 0.01), ([90.0, 110.0], 70.0, 0.05),
    ([99.0, 101.0, 100.0, 100.5], 104.0, 0.001), ([99.0, 101.0, 100.0], 107.0, 0.01),
])
def test_the_runs_to_decide_are_the_fewest_that_make_the_test_significant(values, current, max_pvalue):
    import statistics

    mean, stdev = statistics.fmean(values), statistics.stdev(values)
    more = ra.runs_to_decide(values, current, max_pvalue)
    assert more is not None and 1 <= more <= ra.MAX_RUNS_TO_DECIDE

    def at(points):
        return pvalue_at(mean, stdev, points, current)

    assert at(len(values) + more) <= max_pvalue
    assert at(len(values) + more - 1) > max_pvalue


def pvalue_at(mean, stdev, points, current):
    """Reference: the prediction test's p-value for a history of ``points`` runs of this mean and spread."""
    from scipy import stats

    t = abs(current - mean) / (stdev * (1 + 1.0 / points) ** 0.5)
    return 2 * stats.t.sf(t, points - 1)


def test_one_more_run_can_be_enough():
    assert ra.runs_to_decide([99.0, 101.0, 100.0], 107.0, 0.01) == 1


def test_the_runs_to_decide_count_a_pvalue_equal_to_the_limit_as_decided():
    # at max_pvalue 1 every test decides ("at most", as for the verdict): the next run is enough
    assert ra.runs_to_decide([99.0, 101.0], 100.0, 1.0) == 1


def test_more_than_a_hundred_runs_to_decide_is_none():
    from scipy import stats

    values, max_pvalue = [90.0, 110.0], 0.01
    stdev = 200 ** 0.5

    def smallest_change(points):
        # the change the prediction test at ``points`` history points just calls significant
        return stats.t.isf(max_pvalue / 2, points - 1) * stdev * (1 + 1.0 / points) ** 0.5

    assert ra.MAX_RUNS_TO_DECIDE == 100
    at_100, at_101 = smallest_change(2 + 100), smallest_change(2 + 101)
    assert ra.runs_to_decide(values, 100.0 - at_100 * 1.0000001, max_pvalue) == 100
    assert ra.runs_to_decide(values, 100.0 - (at_100 + at_101) / 2, max_pvalue) is None
    assert ra.runs_to_decide([60.0, 120.0], 75.7, max_pvalue) is None


# --------------------------------------------------------------------------
# short histories (fewer points than the method needs)


def short(values, current, higher_is_better=True, threshold=0.1, max_pvalue=0.01):
    return ra.judge([{"value": v} for v in values], current, higher_is_better, "edivisive", settings()["method_options"],
                    threshold, max_pvalue)


def test_a_short_histories_evidence_names_the_method_threshold_and_why():
    verdict, evidence = short([100.0, 100.0, 100.0], 70.0)
    assert verdict == "regression"
    assert evidence["method"] == "short_history" and evidence["threshold"] == 0.1 and evidence["max_pvalue"] == 0.01
    assert evidence["note"] == "3 history point(s) < 6 needed by edivisive: compared with the history mean"
    assert evidence["history_points"] == 3 and evidence["history_mean"] == 100.0 and evidence["current"] == 70.0
    assert evidence["relative_change"] == pytest.approx(-0.3) and evidence["pvalue"] == 0.0
    assert "inconclusive_reason" not in evidence and "why" not in evidence


def test_the_short_history_threshold_and_pvalue_have_their_documented_defaults():
    import inspect

    parameters = inspect.signature(ra.judge).parameters
    assert parameters["short_history_max_pvalue"].default == 0.01
    # a 10 % drop against a steady short history: significant at 0.01 by default
    verdict, evidence = ra.judge([{"value": 100.0}, {"value": 100.1}, {"value": 99.9}], 85.0, True, "edivisive",
                                 settings()["method_options"], 0.1)
    assert verdict == "regression" and evidence["max_pvalue"] == 0.01


@pytest.mark.parametrize("current, verdict", [(110.0, "inconclusive"), (109.9, "no_change"), (90.0, "inconclusive"),
                                              (90.1, "no_change")])
def test_a_change_of_exactly_the_threshold_is_judged_and_a_smaller_one_is_no_change(current, verdict):
    assert short([100.0], current)[0] == verdict


@pytest.mark.parametrize("higher_is_better, current, leaning, shown", [
    (True, 80.0, "regression", "-20.0 %"), (True, 125.0, "improvement", "+25.0 %"),
    (False, 80.0, "improvement", "-20.0 %"),
])
def test_one_history_point_is_inconclusive_with_two_more_runs_needed(higher_is_better, current, leaning, shown):
    verdict, evidence = short([100.0], current, higher_is_better)
    assert verdict == "inconclusive"
    assert evidence["inconclusive_reason"] == "short_history" and evidence["runs_needed"] == 2
    assert evidence["leaning"] == leaning
    article = "an" if leaning == "improvement" else "a"
    assert evidence["why"] == ("%s %s of %s against 1 history point, whose spread is unknown: at least 2 more runs "
                               "would decide it" % (article, leaning, shown))


def test_a_rise_from_a_zero_history_point_is_shown_as_the_absolute_change():
    verdict, evidence = short([0.0], 3.0, higher_is_better=False)
    assert verdict == "inconclusive" and evidence["absolute_change"] == 3.0 and evidence["relative_change"] is None
    assert evidence["why"].startswith("a regression of +3 (from 0) against 1 history point")


def test_a_change_within_the_spread_says_how_many_more_runs_would_decide_it():
    values, current = [95.0, 105.0, 100.0], 85.0
    verdict, evidence = short(values, current)
    assert verdict == "inconclusive" and evidence["inconclusive_reason"] == "noise" and evidence["leaning"] == "regression"
    pvalue = prediction_pvalue(values, current)
    assert evidence["pvalue"] == pytest.approx(pvalue, rel=1e-9)
    more = ra.runs_to_decide(values, current, 0.01)
    assert evidence["runs_needed"] == more and more >= 1
    assert evidence["why"] == ("a regression of -15.0 %% is within the spread of 3 history points (p = %.3g > 0.01): "
                               "about %d more run(s) at this spread would decide it" % (pvalue, more))


def test_a_change_that_more_runs_would_not_decide_says_so_with_its_size_in_standard_deviations():
    verdict, evidence = short([60.0, 120.0], 75.7)
    # mean 90, standard deviation 30 * sqrt(2): the change is 14.3 / 42.43 = 0.34 standard deviations
    assert verdict == "inconclusive" and evidence["runs_needed"] is None
    assert evidence["effect_size"] == pytest.approx(-14.3 / (30 * 2 ** 0.5))
    assert evidence["why"] == ("a regression of -15.9 %% is within the spread of 2 history points (p = %.3g > 0.01): "
                               "more runs at this spread would not decide it (the change is 0.3 standard deviations "
                               "of the history): more repetitions or a quieter machine would"
                               % prediction_pvalue([60.0, 120.0], 75.7))


def test_a_pvalue_equal_to_the_limit_decides():
    # threshold 0 and a current value at the mean: p = 1 exactly, "at most" 1 decides: no change
    verdict, evidence = short([99.0, 101.0], 100.0, threshold=0.0, max_pvalue=1.0)
    assert evidence["pvalue"] == 1.0 and verdict == "no_change" and "inconclusive_reason" not in evidence


def test_a_significant_improvement_against_a_short_history_is_reported():
    verdict, evidence = short([100.0, 101.0, 99.0], 130.0)
    assert verdict == "improvement" and evidence["pvalue"] <= 0.01
    assert evidence["pvalue"] == pytest.approx(prediction_pvalue([100.0, 101.0, 99.0], 130.0), rel=1e-9)


# --------------------------------------------------------------------------
# judge: values that are no evidence, strict JSON, full histories


def test_stored_values_that_are_not_finite_numbers_are_no_evidence():
    history = [{"value": True}, {"value": "100"}, {"value": float("nan")}, {"value": float("inf")}, {"value": None},
               {}, {"value": 100}, {"value": 100.0}]
    verdict, evidence = ra.judge(history, 70.0, True, "edivisive", settings()["method_options"], 0.1)
    assert evidence["history_points"] == 2 and evidence["history_mean"] == 100.0 and verdict == "regression"


def test_no_history_at_all_is_not_enough_history_with_the_method_named():
    assert ra.judge([{"value": float("nan")}], 5.0, True, "zscore", {}, 0.1) == (
        "not_enough_history", {"history_points": 0, "current": 5.0, "method": "zscore"})


def test_a_fall_from_an_all_zero_history_is_undefined_as_a_ratio():
    verdict, evidence = short([0.0, 0.0], -3.0)
    assert verdict == "regression" and evidence["relative_change"] is None and evidence["absolute_change"] == -3.0
    assert evidence["undefined"] == {"relative_change": "its base is 0 (a fall from 0): judged by the absolute change"}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_an_infinite_effect_size_is_undefined_and_named():
    # a baseline whose spread is a denormal number: the distance in standard deviations overflows
    verdict, evidence = short([0.0, 5e-324], 1e300)
    assert verdict == "improvement" and evidence["effect_size"] is None
    assert evidence["undefined"]["effect_size"] == "the baseline does not vary: judged by the absolute change"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_pvalue_that_is_not_a_number_is_none_in_the_evidence():
    import json

    _verdict, evidence = short([1.0, 2.0], float("inf"))
    assert evidence["pvalue"] is None and evidence["relative_change"] is None
    json.dumps({k: v for k, v in evidence.items() if k not in ("current", "absolute_change")}, allow_nan=False)


def test_finite_evidence_has_no_undefined_entry():
    _verdict, evidence = short([100.0, 101.0, 99.0], 130.0)
    assert "undefined" not in evidence


def test_a_change_from_an_all_zero_history_has_no_infinite_ratio_in_its_change_points():
    verdict, evidence = ra.judge([{"value": 0.0}] * 12, 3.0, False, "edivisive", settings()["method_options"], 0.1)
    assert verdict == "regression"
    assert evidence["change_points"][-1]["index"] == 12 and evidence["change_points"][-1]["relative_change"] is None
    assert evidence["relative_change"] is None and evidence["absolute_change"] == 3.0


def alternating(count, mean, amplitude):
    return [mean + (amplitude if i % 2 else -amplitude) for i in range(count)]


def full(values, current, higher_is_better=True):
    history = [{"value": v, "run_id": "r%d" % i, "@timestamp": "t%d" % i, "git_commit": "c%d" % i, "test_uuid": "u%d" % i}
               for i, v in enumerate(values)]
    return ra.judge(history, current, higher_is_better, "edivisive", settings()["method_options"], 0.1)


def test_a_change_at_the_newest_run_carries_its_change_point():
    verdict, evidence = full(alternating(12, 100.0, 1.0), 70.0)
    assert verdict == "regression" and evidence["method"] == "edivisive" and evidence["history_points"] == 12
    assert evidence["index"] == 12 and evidence["mean_before"] == 100.0 and evidence["mean_after"] == 70.0
    assert evidence["absolute_change"] == -30.0 and evidence["relative_change"] == pytest.approx(-0.3)
    assert evidence["change_points"][-1]["index"] == 12 and "note" not in evidence


def test_a_history_of_exactly_the_points_the_method_needs_is_judged_by_the_method():
    verdict, evidence = full(alternating(6, 100.0, 1.0), 70.0)
    assert verdict == "regression" and evidence["method"] == "edivisive" and "note" not in evidence
    assert short(alternating(5, 100.0, 1.0), 70.0)[1]["method"] == "short_history"


def test_the_methods_options_are_used_to_find_the_change_points():
    history = [{"value": v} for v in alternating(12, 100.0, 1.0)]
    options = dict(settings()["method_options"], min_magnitude=0.5)
    verdict, evidence = ra.judge(history, 70.0, True, "edivisive", options, 0.1)
    assert verdict == "no_change" and evidence["change_points"] == []


def test_without_change_points_the_whole_history_is_the_baseline():
    verdict, evidence = full(alternating(12, 100.0, 1.0), 100.5)
    assert verdict == "no_change" and evidence["change_points"] == []
    assert evidence["baseline_points"] == 12 and evidence["baseline_mean"] == 100.0
    assert evidence["relative_change"] == pytest.approx(0.005) and evidence["absolute_change"] == 0.5


def test_a_value_still_worse_by_exactly_half_the_change_is_persisting():
    # 100 before; after: 8 runs around 36.25 and the current 70, mean 40: a change of -60 %, and -30 % since
    values = alternating(12, 100.0, 1.0) + alternating(8, 36.25, 15.0)
    verdict, evidence = full(values, 70.0)
    assert evidence["change_points"][-1]["relative_change"] == -0.6
    assert verdict == "persisting_regression" and evidence["relative_change_since"] == -0.3


def test_no_change_is_judged_against_the_current_segment():
    values = alternating(12, 100.0, 1.0) + alternating(8, 50.0, 15.0)
    verdict, evidence = full(values, 80.0)
    # the change at run 12 was a regression, but 80 is less than half of it below the 100 before (-20 % of -46.7 %)
    assert verdict == "no_change" and [c["index"] for c in evidence["change_points"]] == [12]
    assert evidence["baseline_mean"] == 50.0 and evidence["baseline_points"] == 8
    assert evidence["pvalue"] == pytest.approx(prediction_pvalue(values[12:], 80.0), rel=1e-9)
    assert "since" not in evidence


@pytest.mark.parametrize("current, change_since", [(70.0, -0.3), (60.0, -0.4)])
def test_a_value_still_worse_by_half_the_change_is_a_persisting_regression_naming_the_run(current, change_since):
    values = alternating(12, 100.0, 1.0) + alternating(8, 50.0, 15.0)
    verdict, evidence = full(values, current)
    after = (8 * 50.0 + current) / 9   # the new segment's mean, the current value included
    assert verdict == "persisting_regression"
    assert evidence["since"] == {"timestamp": "t12", "run_id": "r12", "git_commit": "c12", "test_uuid": "u12"}
    assert evidence["change_at_since"] == pytest.approx((after - 100.0) / 100.0)
    assert evidence["pre_change_mean"] == 100.0 and evidence["relative_change_since"] == pytest.approx(change_since)
    assert evidence["absolute_change_since"] == pytest.approx(current - 100.0)
    assert evidence["pvalue_at_since"] == evidence["change_points"][-1]["pvalue"]
    assert evidence["baseline_mean"] == 50.0


def test_a_persisting_regression_is_measured_from_the_segment_before_its_change():
    values = alternating(12, 100.0, 1.0) + alternating(12, 200.0, 1.0) + alternating(6, 120.0, 1.0)
    verdict, evidence = full(values, 120.0)
    assert verdict == "persisting_regression" and [c["index"] for c in evidence["change_points"]] == [12, 24]
    assert evidence["pre_change_mean"] == 200.0 and evidence["relative_change_since"] == pytest.approx(-0.4)
    assert evidence["since"]["run_id"] == "r24"


def test_a_persisting_rise_of_a_lower_is_better_kpi_is_a_persisting_regression():
    values = alternating(12, 100.0, 1.0) + alternating(8, 150.0, 15.0)
    verdict, evidence = full(values, 140.0, higher_is_better=False)
    assert verdict == "persisting_regression" and evidence["relative_change_since"] == pytest.approx(0.4)


def test_an_earlier_improvement_that_holds_is_no_change():
    verdict, evidence = full(alternating(12, 100.0, 1.0) + alternating(8, 150.0, 15.0), 140.0)
    assert verdict == "no_change" and "since" not in evidence


# --------------------------------------------------------------------------
# a run's own spread, uncertainty


@pytest.mark.parametrize("verdict, change, spread, expected", [
    ("regression", -0.05, 0.05, "inconclusive"), ("regression", -0.0501, 0.05, "regression"),
    ("improvement", 0.04, 0.05, "inconclusive"), ("improvement", 0.06, 0.05, "improvement"),
    ("no_change", 0.01, 0.05, "no_change"), ("persisting_regression", -0.01, 0.05, "persisting_regression"),
    ("regression", None, 0.05, "regression"), ("regression", float("-inf"), 0.05, "regression"),
    ("regression", -0.01, None, "regression"),
])
def test_a_change_within_the_runs_own_spread_is_inconclusive(verdict, change, spread, expected):
    evidence = {"relative_change": change, "uncertainty": {"spread": spread, "load_per_cpu": 2.0}}
    assert ra.within_run_spread(verdict, evidence) == expected
    assert ("inconclusive_reason" in evidence) == (expected == "inconclusive")


def test_the_run_spread_verdict_says_why_and_leans():
    evidence = {"relative_change": -0.04, "uncertainty": {"spread": 0.05}}
    assert ra.within_run_spread("regression", evidence) == "inconclusive"
    assert evidence["inconclusive_reason"] == "run_spread" and evidence["runs_needed"] is None
    assert evidence["leaning"] == "regression"
    assert evidence["why"] == ("a regression of -4.0 % within this run's own repetition spread (0.050): a quieter run "
                               "would decide it")
    evidence = {"relative_change": 0.04, "uncertainty": {"spread": 0.05}}
    assert ra.within_run_spread("improvement", evidence) == "inconclusive"
    assert evidence["why"].startswith("an improvement of +4.0 % within this run's own repetition spread")


def test_without_an_uncertainty_the_verdict_stands():
    assert ra.within_run_spread("regression", {"relative_change": -0.01}) == "regression"
    assert ra.within_run_spread("regression", {"relative_change": -0.01, "uncertainty": None}) == "regression"


@pytest.mark.parametrize("metadata, expected", [
    ({}, None), ({"noise_measures": None}, None), ({"noise_measures": {}}, None),
    ({"noise_measures": {"spread": 0.2, "load_per_cpu": 1.5, "other": 3}}, {"spread": 0.2, "load_per_cpu": 1.5}),
    ({"noise_measures": {"spread": 1, "load_per_cpu": True}}, {"spread": 1}),
    ({"noise_measures": {"spread": "0.2", "load_per_cpu": 0.5}}, {"load_per_cpu": 0.5}),
    ({"noise_measures": {"spread": None, "load_per_cpu": False}}, None),
])
def test_a_runs_uncertainty_is_its_numeric_spread_and_load(metadata, expected):
    assert ra.uncertainty(metadata) == expected


# --------------------------------------------------------------------------
# which entries, in which order


@pytest.mark.parametrize("labels, ignored_entries, reason", [
    ({"size": 256}, {"size": [256, 512]}, "size=256 is in regression.ignored_entries"),
    ({"size": 128}, {"size": [256, 512]}, None),
    ({"size": 256}, {"size": None}, None),
    ({"size": 256}, None, None),
    ({"size": 256, "dtype": "fp16"}, {"size": [1], "dtype": ["fp16"]}, "dtype=fp16 is in regression.ignored_entries"),
])
def test_an_entry_is_ignored_when_one_of_its_labels_is_listed(labels, ignored_entries, reason):
    assert ra._ignored(labels, ignored_entries) == reason


def test_report_order_is_numbers_by_value_then_text_then_missing_then_the_test_path():
    items = [{"labels": {"size": size, "dtype": dtype}, "test_path": path} for size, dtype, path in (
        (None, "a", "p1"), ("big", "a", "p2"), (10, "b", "p3"), (2, "b", "p4"), (10, "a", "p5"), ("alpha", "a", "p6"),
        (True, "a", "p7"), (2, "b", "p0"))]
    ordered = sorted(items, key=ra._sort_key(["size", "dtype"]))
    # a boolean is text ("True": capitals before small letters), not the number 1
    assert [item["test_path"] for item in ordered] == ["p0", "p4", "p5", "p3", "p7", "p6", "p2", "p1"]


def test_without_sorting_keys_entries_are_in_test_path_order():
    items = [{"labels": {}, "test_path": path} for path in ("b", "c", "a")]
    assert [item["test_path"] for item in sorted(items, key=ra._sort_key([]))] == ["a", "b", "c"]


# --------------------------------------------------------------------------
# the summary when nothing could be analysed


def test_history_unavailable_lists_every_entry_and_fails_nothing():
    section = settings(machine_keys=["cpu"], comparison_keys=["version"], ignored_keys=["run_id"])
    summary = ra.history_unavailable([payload("a", 256, 1.0, 1.0), payload("b", 512, None, None, exit_code=2)], section,
                                     "connection refused")
    analysed_at = summary.pop("analysed_at")
    import datetime

    assert datetime.datetime.fromisoformat(analysed_at).utcoffset() == datetime.timedelta(0)
    assert summary == {
        "method": "edivisive", "options": section["method_options"], "fail_test_on_regression": True,
        "fail_on_persisting": False, "fail_on_drift": False, "require_history": False, "comparison_keys": ["version"],
        "ignored_keys": ["run_id"],
        "machine_keys": ["cpu"], "compare_across_machines": False, "baseline_policy": "prefer_quiet", "store": "unavailable",
        "entries_analysed": 0, "kpis_analysed": 0, "kpis_with_history": 0, "regressions": [],
        "persisting_regressions": [], "improvements": [], "drifts": [], "inconclusive": [], "no_change": 0, "not_enough_history": [],
        "without_history": {"none": 0, "noisy": 0, "forgotten": 0, "other_machine": 0}, "noisy_entries": [],
        "baselines_with_noisy_runs": 0,
        "not_analysed": [{"test": "run/a", "reason": "history unavailable: connection refused"},
                         {"test": "run/b", "reason": "history unavailable: connection refused"}],
        "excluded_from_baselines": {"noisy": 0, "forgotten": 0},
        "skipped_documents": {"count": 0, "reasons": {}, "read_as_null": 0, "words": ""},
        "message": "history unavailable (connection refused): nothing analysed", "fail_test": False, "fail_reasons": []}


# --------------------------------------------------------------------------
# the gate


def gate_summary(**changes):
    summary = {"fail_test_on_regression": True, "fail_on_persisting": False, "require_history": False,
               "kpis_with_history": 1, "regressions": [], "persisting_regressions": []}
    summary.update(changes)
    return summary


QUIET = {"noisy": False}
NOISY_AGAINST_QUIET = {"noisy": True}
NOISY_AGAINST_NOISY = {"noisy": True, "baseline_noisy_points": 3}


@pytest.mark.parametrize("changes, reasons", [
    ({}, []),
    ({"regressions": [QUIET, QUIET]}, ["2 new regression(s)"]),
    ({"regressions": [NOISY_AGAINST_QUIET]}, []),
    ({"regressions": [NOISY_AGAINST_QUIET, NOISY_AGAINST_NOISY]}, ["1 new regression(s)"]),
    ({"regressions": [QUIET], "fail_test_on_regression": False}, []),
    ({"persisting_regressions": [QUIET]}, []),
    ({"persisting_regressions": [QUIET], "fail_on_persisting": True}, ["1 persisting regression(s)"]),
    ({"persisting_regressions": [QUIET], "fail_on_persisting": True, "fail_test_on_regression": False}, []),
    ({"require_history": True}, []),
    ({"require_history": True, "kpis_with_history": 0}, ["no KPI has any history (regression.require_history)"]),
    ({"kpis_with_history": 0}, []),
    ({"regressions": [QUIET], "persisting_regressions": [QUIET, QUIET], "fail_on_persisting": True,
      "require_history": True, "kpis_with_history": 0},
     ["1 new regression(s)", "2 persisting regression(s)", "no KPI has any history (regression.require_history)"]),
    ({"require_history": True, "kpis_with_history": 0, "fail_test_on_regression": False},
     ["no KPI has any history (regression.require_history)"]),
])
def test_the_gate_fails_on_new_regressions_persisting_ones_when_asked_and_no_history_when_required(changes, reasons):
    assert ra.gate_decision(gate_summary(**changes)) == {"fail_test": bool(reasons), "fail_reasons": reasons}


# --------------------------------------------------------------------------
# the words of the console line


@pytest.mark.parametrize("summary, words", [
    ({}, ""),
    ({"noisy_entries": [], "baselines_with_noisy_runs": 0, "excluded_from_baselines": {"noisy": 0}}, ""),
    ({"noisy_entries": [{}], "fail_test_on_regression": True, "baseline_policy": "prefer_quiet"},
     "1 noisy entry, compared with their uncertainty (a regression fails the test only against a baseline with noisy "
     "runs); baselines prefer_quiet (noisy runs enter a baseline only where there are too few quiet ones): "
     "0 with noisy runs"),
    ({"noisy_entries": [{}, {}], "fail_test_on_regression": False, "baseline_policy": "all",
      "baselines_with_noisy_runs": 2},
     "2 noisy entries, compared with their uncertainty; baselines all (noisy runs enter the baselines): 2 with noisy runs"),
    ({"excluded_from_baselines": {"noisy": 3, "forgotten": 1}, "baseline_policy": "quiet_only"},
     "baselines quiet_only (noisy runs stay out of the baselines): 0 with noisy runs, 3 noisy history point(s) left out"),
    ({"baselines_with_noisy_runs": 1, "noisy_entries": None, "excluded_from_baselines": None},
     "baselines prefer_quiet (noisy runs enter a baseline only where there are too few quiet ones): 1 with noisy runs"),
])
def test_the_noise_words_say_what_noisy_runs_did(summary, words):
    assert ra.noise_words(summary) == words


def message_summary(**changes):
    summary = {"kpis_with_history": 3, "kpis_analysed": 5, "entries_analysed": 1, "method": "zscore",
               "regressions": [{}], "persisting_regressions": [{}, {}], "improvements": [{}, {}, {}],
               "inconclusive": [{}], "no_change": 4,
               "without_history": {"none": 1, "noisy": 0, "forgotten": 1, "other_machine": 0}}
    summary.update(changes)
    return summary


def test_the_console_line_counts_every_verdict_and_says_why_kpis_have_no_history():
    assert ra.summary_message(message_summary()) == (
        "3 KPI(s) of 1 entry compared (zscore): 1 regression(s), 2 persisting regression(s), 3 improvement(s), "
        "0 drift(s), 1 inconclusive, 4 no change; 2 KPI(s) without history (1 none stored, 1 only forgotten runs)")


def test_the_console_line_ends_with_the_noise_and_the_gates_reasons():
    summary = message_summary(entries_analysed=2, without_history={"none": 0, "noisy": 2, "forgotten": 0, "other_machine": 0},
                              baselines_with_noisy_runs=1, baseline_policy="all", excluded_from_baselines={"noisy": 0},
                              fail_reasons=["1 new regression(s)", "2 persisting regression(s)"])
    assert ra.summary_message(summary) == (
        "3 KPI(s) of 2 entries compared (zscore): 1 regression(s), 2 persisting regression(s), 3 improvement(s), "
        "0 drift(s), 1 inconclusive, 4 no change; 2 KPI(s) without history (2 only noisy runs, left out); "
        "baselines all (noisy runs enter the baselines): 1 with noisy runs; "
        "the test fails: 1 new regression(s), 2 persisting regression(s)")


def test_the_console_line_counts_missing_lists_as_zero():
    summary = message_summary(kpis_analysed=3, inconclusive=None, no_change=None, without_history=None, fail_reasons=[])
    assert ra.summary_message(summary) == (
        "3 KPI(s) of 1 entry compared (zscore): 1 regression(s), 2 persisting regression(s), 3 improvement(s), "
        "0 drift(s), 0 inconclusive, 0 no change; 0 KPI(s) without history")


def test_every_no_history_reason_has_words():
    assert list(ra.NO_HISTORY_WORDS) == list(ra.NO_HISTORY_REASONS) == ["none", "noisy", "forgotten", "other_machine"]
    summary = message_summary(kpis_with_history=0, kpis_analysed=4,
                              without_history={"none": 1, "noisy": 1, "forgotten": 1, "other_machine": 1})
    assert "4 KPI(s) without history (1 none stored, 1 only noisy runs, left out, 1 only forgotten runs, " \
           "1 only on other machines)" in ra.summary_message(summary)


# --------------------------------------------------------------------------
# analyse: the summary, the records and the details, against a store that answers what it is told


class FakeStore(stores_base.ResultsStore):
    """History by (test uuid, KPI name); ``elsewhere`` answers the look-up across machines."""

    def __init__(self, histories, forgotten=(), elsewhere=None):
        self.histories, self.forgotten, self.elsewhere = histories, set(forgotten), elsewhere or {}
        self.batches = []

    def describe(self):
        return "fake store"

    def marks(self):
        return {run_id: {"forgotten": run_id in self.forgotten} for run_id in ("forgotten-run", "kept-run")}

    def history_batch(self, queries, ignore_keys=()):
        self.batches.append(([(q.workload, q.kpi_name, q.exclude_test_uuid) for q in queries], list(ignore_keys)))
        source = self.histories if len(self.batches) == 1 else self.elsewhere
        return [[dict(d) for d in source.get((q.exclude_test_uuid, q.kpi_name), [])] for q in queries]


def stored(values, noisy=(), name="k"):
    return [{"value": v, "@timestamp": "2026-10-%02dT10:00:00+00:00" % (i + 1), "test_uuid": "%s-%d" % (name, i),
             "run_id": "%s-run-%d" % (name, i), "git_commit": "g%d" % i, "noisy": i in noisy,
             "artifacts_url": "https://artifacts/%s/%d" % (name, i)} for i, v in enumerate(values)]


def kpi(value, higher_is_better=True, ignored=False, view_of=None, unit="u"):
    found = {"value": value, "unit": unit, "help": "help of %s" % unit, "higher_is_better": higher_is_better,
             "ignored_for_regression": ignored}
    if view_of:
        found["view_of"] = view_of
    return found


def entry(uuid, size, kpis_of, **metadata):
    labels = {"indicator": "matmul", "size": size, "version": "9.0"}
    return {"metadata": dict({"test_uuid": uuid, "timestamp": "2026-11-22T10:00:%02d+00:00" % size, "test_path": "run/" + uuid,
                              "exit_code": 0}, **metadata), "labels": labels, "kpis": kpis_of}


FORGOTTEN = {"value": 1.0, "run_id": "forgotten-run", "@timestamp": "2026-09-01T10:00:00+00:00"}


def analysed_run():
    quiet_rate = stored([100.0, 101.0, 99.0], name="rate")
    histories = {
        ("a", "rate"): [FORGOTTEN] + quiet_rate,
        ("a", "latency"): stored([10.0] * 8, name="lat"),
        ("a", "errors"): stored([0.0] * 8, name="err"),
        # what a look-up of an ignored KPI, a KPI without a value or a view would find: never asked for
        ("a", "cv"): [FORGOTTEN], ("a", "missing"): [FORGOTTEN], ("a", "a_view"): [FORGOTTEN],
        ("a", "c_view"): [FORGOTTEN],
        ("b", "rate"): stored([100.0, 101.0, 99.0, 100.0, 100.0], noisy=(3, 4), name="brate"),
        ("b", "latency"): stored([10.0, 10.0, 10.0, 10.0], noisy=(0,), name="blat"),
    }
    payloads = [
        entry("b", 3, {"rate": kpi(70.0), "latency": kpi(10.0, False)}, noise=["repetitions spread 0.500 > 0.100"],
              noise_measures={"spread": 0.5, "load_per_cpu": 0.25}),
        entry("skipped", 1, {"rate": kpi(1.0)}),
        entry("a", 2, {"a_view": kpi(1 / 70.0, False, view_of="rate", unit="s"), "b_view": kpi(2.0, view_of="cv"),
                       "c_view": kpi(3.0, view_of="rate"), "cv": kpi(0.5, ignored=True), "missing": kpi(None),
                       "rate": kpi(70.0), "latency": kpi(10.0, False), "errors": kpi(0, False)}),
    ]
    store = FakeStore(histories, forgotten=["forgotten-run"])
    summary, records, details = ra.analyse(payloads, store, settings(ignored_entries={"size": [1]}), "w")
    return store, summary, records, details


def test_analyse_counts_each_verdict_once_and_names_the_store():
    store, summary, _records, _details = analysed_run()
    assert summary["store"] == "fake store" and summary["entries_analysed"] == 2
    assert summary["not_analysed"] == [{"test": "run/skipped", "reason": "size=1 is in regression.ignored_entries"}]
    # primaries only: rate, latency, errors of "a"; rate, latency of "b"
    assert summary["kpis_analysed"] == 5 and summary["kpis_with_history"] == 5
    assert summary["no_change"] == 3 and [r["kpi"] for r in summary["regressions"]] == ["rate"]
    assert [(r["test"], r["inconclusive_reason"]) for r in summary["inconclusive"]] == [("run/b", "run_spread")]
    # one look-up batch, for the primaries with a value, by workload, KPI and the entry's own uuid
    assert store.batches == [([("w", "rate", "a"), ("w", "latency", "a"), ("w", "errors", "a"), ("w", "rate", "b"),
                               ("w", "latency", "b")], ["version", "test_path", "run_id"])]
    assert summary["excluded_from_baselines"] == {"noisy": 0, "forgotten": 1}
    assert summary["baselines_with_noisy_runs"] == 2
    assert summary["noisy_entries"] == [{"test": "run/b", "reasons": ["repetitions spread 0.500 > 0.100"]}]
    assert summary["message"] == ra.summary_message(summary) and summary["fail_test"] is True
    assert summary["fail_reasons"] == ["1 new regression(s)"]


def test_a_record_carries_the_verdict_its_evidence_and_the_entrys_labels():
    _store, _summary, records, _details = analysed_run()
    assert [(r["test_uuid"], r["kpi_name"]) for r in records] == [
        ("a", "rate"), ("a", "latency"), ("a", "errors"), ("a", "a_view"), ("a", "c_view"),
        ("b", "rate"), ("b", "latency")]
    pvalue = prediction_pvalue([100.0, 101.0, 99.0], 70.0)
    assert records[0] == {
        "indicator": "matmul", "size": 2, "version": "9.0", "kind": "regression", "kpi_name": "rate", "value": 70.0,
        "unit": "u", "verdict": "regression", "method": "short_history", "view_of": None,
        "relative_change": pytest.approx(-0.3), "absolute_change": -30.0, "undefined": None,
        "pvalue": pytest.approx(pvalue, rel=1e-9), "effect_size": -30.0, "history_points": 3, "noisy": False, "noise": [],
        "repetition_spread": None, "host_load_per_cpu": None, "baseline_policy": "prefer_quiet",
        "baseline_noisy_points": 0, "inconclusive_reason": None, "runs_needed": None, "why": None,
        "no_history_reason": None, "drift": None, "test_uuid": "a", "@timestamp": "2026-11-22T10:00:02+00:00", "workload": "w",
        "doc_id": stores_base.doc_id("regression", "a", "rate")}
    view = records[3]
    assert view["verdict"] == "regression" and view["view_of"] == "rate" and view["method"] == "short_history"
    assert view["history_points"] == 3 and view["value"] == 1 / 70.0 and view["unit"] == "s"
    noisy = records[5]
    assert noisy["verdict"] == "inconclusive" and noisy["noisy"] is True
    assert noisy["noise"] == ["repetitions spread 0.500 > 0.100"]
    assert noisy["repetition_spread"] == 0.5 and noisy["host_load_per_cpu"] == 0.25
    assert noisy["baseline_noisy_points"] == 2 and noisy["history_points"] == 5
    assert noisy["inconclusive_reason"] == "run_spread" and noisy["runs_needed"] is None
    assert noisy["why"].startswith("a regression of -30.0 % within this run's own repetition spread (0.500)")


def test_the_details_show_each_entry_its_kpis_and_their_history():
    _store, _summary, _records, details = analysed_run()
    assert [d["test"] for d in details] == ["run/a", "run/b"]
    a = details[0]
    assert {k: a[k] for k in ("test", "labels", "test_uuid", "timestamp", "noise", "uncertainty")} == {
        "test": "run/a", "labels": {"indicator": "matmul", "size": 2, "version": "9.0"}, "test_uuid": "a",
        "timestamp": "2026-11-22T10:00:02+00:00", "noise": [], "uncertainty": None}
    assert [k["name"] for k in a["kpis"]] == ["rate", "latency", "errors", "a_view", "c_view"]
    rate = a["kpis"][0]
    assert {k: rate[k] for k in ("name", "unit", "help", "higher_is_better", "verdict", "view_of")} == {
        "name": "rate", "unit": "u", "help": "help of u", "higher_is_better": True, "verdict": "regression",
        "view_of": None}
    assert rate["history"][0] == {"timestamp": "2026-10-01T10:00:00+00:00", "value": 100.0, "test_uuid": "rate-0",
                                  "run_id": "rate-run-0", "git_commit": "g0", "noisy": False,
                                  "artifacts_url": "https://artifacts/rate/0"}
    assert [h["value"] for h in rate["history"]] == [100.0, 101.0, 99.0]   # the forgotten run is not shown
    view = a["kpis"][3]
    assert view["evidence"] == {"view_of": "rate", "method": "short_history", "history_points": 3, "current": 1 / 70.0}
    assert view["history"] == [] and view["verdict"] == "regression" and view["view_of"] == "rate"
    b = details[1]
    assert b["noise"] == ["repetitions spread 0.500 > 0.100"] and b["uncertainty"] == {"spread": 0.5, "load_per_cpu": 0.25}
    assert [h["noisy"] for h in b["kpis"][0]["history"]] == [False, False, False, True, True]


def test_analyse_stamps_the_time_of_the_analysis_in_utc():
    import datetime

    _store, summary, _records, _details = analysed_run()
    stamp = datetime.datetime.fromisoformat(summary["analysed_at"])
    assert stamp.utcoffset() == datetime.timedelta(0)
    assert abs((datetime.datetime.now(datetime.timezone.utc) - stamp).total_seconds()) < 60


def test_analyse_judges_short_histories_with_the_configured_threshold_and_pvalue():
    histories = {("a", "rate"): stored([100.0, 101.0, 99.0], name="r")}
    payloads = [entry("a", 2, {"rate": kpi(80.0)})]
    _summary, records, _details = ra.analyse(payloads, FakeStore(histories), settings(short_history_threshold=0.25), "w")
    assert records[0]["verdict"] == "no_change"
    _summary, records, _details = ra.analyse(payloads, FakeStore(histories), settings(short_history_max_pvalue=1e-9), "w")
    assert records[0]["verdict"] == "inconclusive" and records[0]["inconclusive_reason"] == "noise"


def test_a_record_says_how_many_more_runs_would_decide():
    payloads = [entry("a", 2, {"rate": kpi(80.0)})]
    _summary, records, _details = ra.analyse(payloads, FakeStore({("a", "rate"): stored([100.0], name="r")}), settings(), "w")
    assert records[0]["verdict"] == "inconclusive" and records[0]["runs_needed"] == 2
    assert records[0]["inconclusive_reason"] == "short_history"


def test_a_summary_line_names_the_kpi_and_the_evidence_that_is_known():
    shown = ("history_mean", "mean_before", "baseline_mean", "absolute_change", "relative_change", "pvalue", "effect_size",
             "since", "pre_change_mean", "relative_change_since", "undefined", "baseline_noisy_points", "uncertainty",
             "inconclusive_reason", "runs_needed", "leaning", "why", "no_history_reason")
    evidence = {key: "value of %s" % key for key in shown}
    evidence.update(history_points=4, method="zscore", index=7, change_points=[], note="not shown", pvalue_at_since=0.1)
    line = ra._line("run/x", "rate", kpi(70.0, unit="GB/s"), "regression", evidence, ["loaded"])
    assert line == dict({"test": "run/x", "kpi": "rate", "unit": "GB/s", "current": 70.0, "verdict": "regression",
                         "history_points": 4, "method": "zscore", "noisy": True},
                        **{key: "value of %s" % key for key in shown})
    # unknown (None) evidence is left out; a quiet run is not noisy
    line = ra._line("run/x", "rate", kpi(70.0), "no_change", dict(evidence, pvalue=None, why=None), [])
    assert "pvalue" not in line and "why" not in line and line["noisy"] is False and line["effect_size"]


class Left:
    def __init__(self, noisy=0, forgotten=0):
        self.left_out = {"noisy": noisy, "forgotten": forgotten}


@pytest.mark.parametrize("split, elsewhere, reason", [
    (Left(), False, "none"), (Left(), True, "other_machine"), (Left(forgotten=2), True, "forgotten"),
    (Left(noisy=1, forgotten=2), True, "noisy"), (Left(noisy=1), False, "noisy"),
])
def test_a_kpi_without_a_baseline_says_why(split, elsewhere, reason):
    assert ra._no_history_reason(split, elsewhere) == reason


def test_kpis_with_no_history_here_are_looked_up_once_across_machines():
    store = FakeStore({("a", "rate"): stored([1.0])}, elsewhere={("b", "rate"): stored([1.0])})
    lookups = [({"labels": {"x": 1}, "payload": {"metadata": {"test_uuid": uuid}}}, name)
               for uuid, name in (("a", "rate"), ("b", "rate"), ("c", "rate"))]
    histories, elsewhere = ra._histories(store, settings(machine_keys=["cpu", "gpu"]), "w", lookups, ["version"])
    assert [len(h) for h in histories] == [1, 0, 0] and elsewhere == [False, True, False]
    # the second batch asks only for the empty ones, ignoring the machine labels too
    assert store.batches[1] == ([("w", "rate", "b"), ("w", "rate", "c")], ["version", "cpu", "gpu"])


@pytest.mark.parametrize("changes", [{"machine_keys": ["cpu"], "compare_across_machines": True}, {"machine_keys": []}])
def test_no_second_look_up_when_machines_are_compared_or_not_named(changes):
    store = FakeStore({}, elsewhere={("a", "rate"): stored([1.0])})
    lookups = [({"labels": {}, "payload": {"metadata": {"test_uuid": "a"}}}, "rate")]
    assert ra._histories(store, settings(**changes), "w", lookups, []) == ([[]], [False])
    assert len(store.batches) == 1


def test_no_second_look_up_when_every_kpi_has_history():
    store = FakeStore({("a", "rate"): stored([1.0])}, elsewhere={("a", "rate"): stored([1.0])})
    lookups = [({"labels": {}, "payload": {"metadata": {"test_uuid": "a"}}}, "rate")]
    assert ra._histories(store, settings(machine_keys=["cpu"]), "w", lookups, [])[1] == [False]
    assert len(store.batches) == 1


# --------------------------------------------------------------------------
# baselines: which history runs a baseline is made of


def runs(quiet, noisy, forgotten=0):
    documents = [{"run_id": "q%d" % i, "value": 1.0} for i in range(quiet)]
    documents += [{"run_id": "n%d" % i, "value": 2.0, "noisy": True} for i in range(noisy)]
    documents += [{"run_id": "f%d" % i, "value": 3.0, "noisy": i % 2 == 0} for i in range(forgotten)]
    return documents


@pytest.mark.parametrize("policy, quiet, noisy, needed, with_noisy", [
    ("prefer_quiet", 5, 2, 6, True), ("prefer_quiet", 6, 2, 6, False), ("prefer_quiet", 7, 2, 6, False),
    ("prefer_quiet", 0, 3, 6, True), ("all", 10, 2, 6, True), ("all", 0, 2, 6, True),
    ("quiet_only", 0, 3, 6, False), ("quiet_only", 2, 3, 6, False),
])
def test_the_policy_decides_whether_noisy_runs_enter_the_baseline(policy, quiet, noisy, needed, with_noisy):
    split = baselines.Split(runs(quiet, noisy), set(), policy, needed)
    assert len(split.baseline) == quiet + (noisy if with_noisy else 0)
    assert split.noisy_points == (noisy if with_noisy else 0) and split.noisy_history == noisy
    assert split.left_out == {"noisy": 0 if with_noisy else noisy, "forgotten": 0}


def test_forgotten_runs_never_enter_a_baseline_and_are_counted():
    history = runs(2, 1, forgotten=3)
    split = baselines.Split(history, {"f0", "f1", "f2", "unknown"}, "all", 6)
    assert [d["run_id"] for d in split.baseline] == ["q0", "q1", "n0"]
    assert split.left_out == {"noisy": 0, "forgotten": 3} and split.noisy_history == 1 and split.noisy_points == 1


def test_a_baseline_keeps_the_stores_order():
    history = [{"run_id": "a", "noisy": True}, {"run_id": "b"}, {"run_id": "c", "noisy": True}, {"run_id": "d"}]
    split = baselines.Split(history, set(), "prefer_quiet", 6)
    assert [d["run_id"] for d in split.baseline] == ["a", "b", "c", "d"]
    assert [d["run_id"] for d in baselines.Split(history, set(), "quiet_only", 6).baseline] == ["b", "d"]


def test_a_history_without_noisy_runs_has_no_noisy_points_whatever_the_policy():
    for policy in baselines.BASELINE_POLICIES:
        split = baselines.Split(runs(2, 0), set(), policy, 6)
        assert split.noisy_points == 0 and split.left_out == {"noisy": 0, "forgotten": 0} and len(split.baseline) == 2


def test_the_policies_are_named_and_described():
    assert baselines.BASELINE_POLICIES == ("prefer_quiet", "all", "quiet_only")
    assert baselines.DESCRIPTIONS == {
        "prefer_quiet": "noisy runs enter a baseline only where there are too few quiet ones",
        "all": "noisy runs enter the baselines", "quiet_only": "noisy runs stay out of the baselines"}


def test_a_stored_document_of_other_types_is_no_evidence_and_the_summary_counts_it(store):
    # anyone who can write to a shared store: a run id that is a list once stopped the whole step
    store.write([stores_base.kpi_document({
        "indicator": "matmul", "size": 256, "version": "1.4", "test_path": "old/bad", "run_id": ["not", "text"],
        "kpi_name": "rate", "value": 100.0, "unit": "x", "higher_is_better": True, "ignored_for_regression": False,
        "test_uuid": "bad-256", "workload": "w", "@timestamp": "2026-11-21T10:00:00+00:00"})])
    summary, _records, details = ra.analyse([payload("new", 256, 100.0, 0.01)], store, settings(), "w")
    words = "1 stored document(s) skipped: 1 field run_id is a list, expected text"
    assert summary["skipped_documents"] == {"count": 1, "reasons": {"field run_id is a list, expected text": 1},
                                            "read_as_null": 0, "words": words}
    assert summary["message"].endswith("; " + words)
    rate = [kpi for kpi in details[0]["kpis"] if kpi["name"] == "rate"][0]
    assert rate["evidence"]["history_points"] == 20 and "bad-256" not in {h["test_uuid"] for h in rate["history"]}


def test_a_drifting_kpi_is_a_drift_in_the_summary_the_record_and_the_report(tmp_path):
    from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import reports as reports_lib

    # 30 daily runs losing 0.3 % a run, in 0.2 % of jitter
    values = [100.0 * (1 - 0.003 * i) * (1 + 0.002 * ((i * 7919) % 11 - 5) / 5) for i in range(30)]
    store = history_store(tmp_path, values)
    current = values[-1] * 0.998
    summary, records, details = ra.analyse([payload("new", 64, current, 1 / current)], store,
                                           settings(method="linear_segments", fail_on_drift=True), "w")
    store.close()
    assert [(line["kpi"], line["drift"]["direction"]) for line in summary["drifts"]] == [("rate", "worse")]
    assert summary["fail_test"] and summary["fail_reasons"] == ["1 drift(s) for the worse"]
    assert "0 improvement(s), 1 drift(s)" in summary["message"] and summary["regressions"] == []
    rate = next(r for r in records if r["kpi_name"] == "rate")
    assert rate["verdict"] == "drift" and rate["drift"]["relative_change"] < -0.05 and rate["drift"]["start"] == 0
    _title, page = reports_lib.regression_report(summary, details)
    assert "<h2>Drifts</h2>" in page and "drift for the worse since 2026-10-01T10:00:00+00:00 (run h-run-0" in page
