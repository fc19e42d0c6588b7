"""linear_segments, the default change detector: what it must find, what it must not, gaps, drifts.

Every expected index below is where the series was built to change (not a value read off the code);
the series are seeded, so each case is the same on every run.
"""

import math

import numpy as np
import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.regression import methods
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import segments
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import verdicts

METHOD = "linear_segments"


def noise(size, level=100.0, spread=0.01, seed=0):
    return level * (1 + np.random.default_rng(seed).normal(0, spread, size))


def found(values, **options):
    return [c.index for c in methods.find_change_points(list(values), METHOD, **options)]


def test_it_is_the_default_method():
    assert methods.DEFAULT_METHOD == METHOD
    assert methods.find_change_points.__defaults__ == (METHOD,)


@pytest.mark.parametrize("seed", range(5))
def test_a_step_is_found_where_it_happened_with_its_levels(seed):
    values = noise(80, seed=seed)
    values[50:] *= 1.10
    changes = methods.find_change_points(list(values), METHOD)
    assert [c.index for c in changes] == [50]
    assert changes[0].mean_before == pytest.approx(100, rel=0.02)
    assert changes[0].mean_after == pytest.approx(110, rel=0.02)
    assert changes[0].relative_change == pytest.approx(0.10, abs=0.03)
    assert changes[0].pvalue < 0.01


@pytest.mark.parametrize("seed", range(5))
def test_a_regression_and_its_fix_are_both_found_though_the_whole_series_does_not_split(seed):
    """Up at 30, back down at 60: split in two, the whole series changes little (the old default's first
    split failed here and the segmentation stopped)."""
    values = noise(90, seed=seed)
    values[30:60] *= 1.06
    assert found(values) == [30, 60]


@pytest.mark.parametrize("seed", range(5))
def test_a_slow_drift_is_a_drift_not_a_chain_of_steps(seed):
    values = noise(100, seed=seed) * np.linspace(1.0, 1.08, 100)
    result = methods.analyse_series(list(values), METHOD)
    assert result.changes == []
    assert result.drift is not None
    assert result.drift.start == 0 and result.drift.points == 100
    assert result.drift.relative_change == pytest.approx(0.08, abs=0.02)
    assert result.drift.slope == pytest.approx(8.0 / 99, rel=0.25)
    assert result.drift.pvalue < 0.001


@pytest.mark.parametrize("seed", range(5))
def test_a_flat_history_has_no_drift_and_no_change(seed):
    result = methods.analyse_series(list(noise(100, seed=seed)), METHOD)
    assert result.changes == [] and result.drift is None


@pytest.mark.parametrize("seed", range(5))
def test_seasons_are_not_steps(seed):
    """A 3 % season of 12 runs in 1 % noise (the old default cut it every ~12 points)."""
    t = np.arange(96)
    values = noise(96, seed=seed) * (1 + 0.03 * np.sin(2 * math.pi * t / 12))
    assert found(values) == []


@pytest.mark.parametrize("seed", range(5))
def test_outliers_are_not_changes(seed):
    values = noise(80, seed=seed)
    for index, factor in ((12, 1.3), (40, 0.7), (41, 1.25), (63, 1.4)):
        values[index] *= factor
    assert found(values) == []


@pytest.mark.parametrize("growth", [2.0, 3.0])
def test_noise_whose_spread_changes_is_not_a_change(growth):
    """The noise doubles or triples halfway: on 40 series, at most 2 show a change anywhere (the old
    default, and a detector judging all by the whole series' noise, cut many of them)."""
    changed = []
    for seed in range(40):
        values = noise(100, seed=seed)
        values[50:] = 100 * (1 + np.random.default_rng(seed + 1000).normal(0, 0.01 * growth, 50))
        if found(values):
            changed.append(seed)
    assert len(changed) <= 2, changed


@pytest.mark.parametrize("seed", range(5))
def test_the_newest_point_alone_can_be_a_change(seed):
    values = noise(40, seed=seed)
    values[-1] *= 0.9
    changes = methods.find_change_points(list(values), METHOD)
    assert [c.index for c in changes] == [39]
    assert changes[-1].relative_change == pytest.approx(-0.10, abs=0.03)


@pytest.mark.parametrize("seed", range(5))
def test_a_step_three_runs_ago_is_found_at_its_run(seed):
    """Within one run: the noise of the point before a step can make it look like the step's first."""
    values = noise(40, seed=seed)
    values[-3:] *= 0.9
    changes = found(values)
    assert len(changes) == 1 and abs(changes[0] - 37) <= 1


def test_constant_quantised_and_short_series():
    assert found([5.0] * 30) == []
    assert found([1.0]) == [] and found([]) == [] and found([3.0, 4.0]) == []
    assert found([5.0] * 20 + [7.0] * 20) == [20]
    assert found([5.0] * 20 + [7.0] * 20 + [5.0] * 20) == [20, 40]
    # a KPI that only takes a few values (a count): most differences are 0
    assert found([3.0, 3.0, 3.0, 4.0] * 10) == []


def test_gaps_keep_their_place_and_name_the_run():
    """A step at run 40 after two runs without a value: the change point is 40, not 38."""
    values = list(noise(60, seed=3))
    values[40:] = [v * 1.1 for v in values[40:]]
    values[10] = None
    values[25] = float("nan")
    assert found(values) == [40]
    result = methods.analyse_series(values, METHOD)
    assert [c.index for c in result.changes] == [40]


def test_a_verdict_after_gaps_names_the_run_and_commit_of_the_change():
    history = [{"value": float(v), "@timestamp": "2026-01-%02dT00:00:00Z" % (1 + i % 28), "run_id": "run-%d" % i,
                "git_commit": "c%03d" % i, "test_uuid": "u%d" % i} for i, v in enumerate(noise(60, seed=4))]
    for item in history[40:]:
        item["value"] *= 0.9
    history[10]["value"] = None                   # a failed point
    history[25]["value"] = float("nan")           # a store answering NaN
    del history[33]["value"]                      # a KPI that run did not have
    options = methods.resolve_options(METHOD)
    verdict, evidence = verdicts.judge(history, 89.0, True, METHOD, options, 0.10)
    assert verdict == "persisting_regression"
    assert evidence["since"]["run_id"] == "run-40" and evidence["since"]["git_commit"] == "c040"
    assert [c["index"] for c in evidence["change_points"]] == [40]
    assert evidence["gaps"] == 3 and evidence["history_points"] == 57


def test_a_drift_is_a_verdict_of_its_own_with_its_start_and_how_far_it_moved():
    values = noise(60, seed=5) * np.linspace(1.0, 0.9, 60)
    history = [{"value": float(v), "@timestamp": i, "run_id": "run-%d" % i} for i, v in enumerate(values)]
    options = methods.resolve_options(METHOD)
    verdict, evidence = verdicts.judge(history, float(values[-1] * 0.999), True, METHOD, options, 0.10)
    assert verdict == "drift"
    drift = evidence["drift"]
    assert drift["direction"] == "worse" and drift["since"]["run_id"] == "run-0"
    assert drift["relative_change"] == pytest.approx(-0.10, abs=0.02)
    # the same trend upwards on a lower-is-better KPI is a drift for the worse too; for a
    # higher-is-better one it is a drift for the better
    rising = [dict(h, value=200 - h["value"]) for h in history]
    assert verdicts.judge(rising, 200 - float(values[-1]), False, METHOD, options, 0.10)[1]["drift"]["direction"] == \
        "worse"
    assert verdicts.judge(rising, 200 - float(values[-1]), True, METHOD, options, 0.10)[1]["drift"]["direction"] == \
        "better"


def test_a_step_at_the_newest_run_is_a_regression_not_a_drift():
    values = noise(40, seed=6)
    history = [{"value": float(v), "@timestamp": i, "run_id": "run-%d" % i} for i, v in enumerate(values)]
    verdict, evidence = verdicts.judge(history, 85.0, True, METHOD, methods.resolve_options(METHOD), 0.10)
    assert verdict == "regression" and "drift" not in evidence
    assert evidence["relative_change"] == pytest.approx(-0.15, abs=0.03)


def test_a_drift_for_the_worse_fails_the_gate_only_when_asked():
    summary = {"fail_test_on_regression": True, "fail_on_persisting": False, "require_history": False,
               "kpis_with_history": 1, "regressions": [], "persisting_regressions": [],
               "drifts": [{"drift": {"direction": "worse"}}, {"drift": {"direction": "better"}}]}
    assert verdicts.gate_decision(dict(summary, fail_on_drift=False)) == {"fail_test": False, "fail_reasons": []}
    assert verdicts.gate_decision(dict(summary, fail_on_drift=True)) == {
        "fail_test": True, "fail_reasons": ["1 drift(s) for the worse"]}


def test_outliers_mask_spares_the_newest_point_and_uses_five_neighbours():
    series = np.array([10.0, 10.0, 10.0, 30.0, 10.0, 10.0, 10.0, 10.0, 50.0])
    mask, medians = segments.outliers(series, 1.0, 4.0)
    assert mask.tolist() == [False, False, False, True, False, False, False, False, False]
    assert medians[3] == 10.0
    # an outlier pair is still two outliers (a median of three would keep them)
    pair = np.array([10.0] * 4 + [30.0, 30.0] + [10.0] * 4)
    assert segments.outliers(pair, 1.0, 4.0)[0].tolist() == [False] * 4 + [True, True] + [False] * 4


def test_the_median_of_five_network_is_the_median():
    rng = np.random.default_rng(7)
    columns = rng.integers(0, 4, size=(5, 2000)).astype(float)
    assert np.array_equal(segments._median_of_five(*columns), np.median(columns, axis=0))


def test_noise_scale_is_the_spread_of_one_point_unmoved_by_steps_and_drifts():
    values = noise(40000, spread=0.02, seed=8)
    plain = segments.noise_scale(values)
    assert plain == pytest.approx(2.0, rel=0.03)
    values[20000:] += 30
    values += np.linspace(0, 500, 40000)
    assert segments.noise_scale(values) == pytest.approx(plain, rel=0.01)
    assert segments.noise_scale(np.array([1.0, 2.0])) == 0.0


def test_options_are_validated_with_their_names():
    with pytest.raises(Exception, match="min_size"):
        methods.resolve_options(METHOD, {"min_size": 2})
    with pytest.raises(Exception, match="penalty"):
        methods.resolve_options(METHOD, {"penalty": 0})
    assert methods.get_method(METHOD).minimum_history(methods.resolve_options(METHOD)) == 5
