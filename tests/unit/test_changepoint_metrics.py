"""benchmarks/changepoint_metrics.py: TCPDBench's F1 with a margin and covering.

The expected values of the first tests are the examples TCPDBench publishes in the docstrings of its
``analysis/scripts/metrics.py`` (van den Burg & Williams 2020); the others are edge cases and the one-line
refusals of bad input."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))

import changepoint_metrics as metrics  # noqa: E402  pylint: disable=wrong-import-position


# --------------------------------------------------------------------------
# TCPDBench's published examples

@pytest.mark.parametrize("truth,found,expected", [
    ({1, 10, 20, 23}, {3, 8, 20}, {1, 10, 20}),
    ({1, 10, 20, 23}, {1, 3, 8, 20}, {1, 10, 20}),
    ({1, 10, 20, 23}, {1, 3, 5, 8, 20}, {1, 10, 20}),
    (set(), {1, 2, 3}, set()),
    ({1, 2, 3}, set(), set()),
])
def test_true_positives_as_published(truth, found, expected):
    assert metrics.true_positives(truth, found) == expected


@pytest.mark.parametrize("annotations,predictions,expected", [
    ({1: [10, 20], 2: [11, 20], 3: [10], 4: [0, 5]}, [10, 20], 1.0),
    ({1: [], 2: [10], 3: [50]}, [10], 0.9090909090909091),
    ({1: [], 2: [10], 3: [50]}, [], 0.8),
])
def test_f_measure_as_published(annotations, predictions, expected):
    assert metrics.f_measure(annotations, predictions) == expected


@pytest.mark.parametrize("first,second,expected", [
    ({1, 2, 3}, set(), 0.0),
    ({1, 2, 3}, {2, 5}, 0.25),
    (set(), {1, 2, 3}, 0.0),
    ({1, 2, 3}, {1, 2, 3}, 1.0),
])
def test_overlap_as_published(first, second, expected):
    assert metrics.overlap(first, second) == expected


@pytest.mark.parametrize("locations,n_obs,expected", [
    ([], 5, [{0, 1, 2, 3, 4}]),
    ([3, 5], 8, [{0, 1, 2}, {3, 4}, {5, 6, 7}]),
    ([1, 2, 7], 8, [{0}, {1}, {2, 3, 4, 5, 6}, {7}]),
    ([0, 4], 6, [{0, 1, 2, 3}, {4, 5}]),
])
def test_partition_from_cps_as_published(locations, n_obs, expected):
    assert metrics.partition_from_cps(locations, n_obs) == expected


@pytest.mark.parametrize("truth,prediction,expected", [
    ([{1, 2, 3}, {4, 5, 6}], [{1, 2, 3}, {4, 5}, {6}], 0.8333333333333334),
    ([{1, 2, 3, 4, 5, 6}], [{1, 2, 3, 4}, {5, 6}], 0.6666666666666666),
    ([{1, 2, 3}, {4, 5, 6}], [{1, 2}, {3, 4}, {5, 6}], 0.6666666666666666),
    ([{1}, {2}, {3}, {4, 5, 6}], [{1, 2, 3, 4, 5, 6}], 0.3333333333333333),
])
def test_cover_single_as_published(truth, prediction, expected):
    assert metrics.cover_single(truth, prediction) == expected


@pytest.mark.parametrize("annotations,predictions,n_obs,expected", [
    ({1: [10, 20], 2: [10], 3: [0, 5]}, [10, 20], 45, 0.7962962962962963),
    ({1: [], 2: [10], 3: [40]}, [10], 45, 0.7954144620811286),
    ({1: [], 2: [10], 3: [40]}, [], 45, 0.8189300411522634),
])
def test_covering_as_published(annotations, predictions, n_obs, expected):
    assert metrics.covering(annotations, predictions, n_obs) == expected


# --------------------------------------------------------------------------
# edge cases

def test_f_measure_returns_precision_and_recall():
    # union {0, 10, 50}; predictions {0, 10, 30}: 2 of 3 match; annotators: 1, 1, 1/2 of their points
    score, precision, recall = metrics.f_measure({1: [], 2: [10], 3: [50]}, [10, 30], return_pr=True)
    assert precision == 2 / 3 and recall == pytest.approx(5 / 6)
    assert score == pytest.approx(2 * precision * recall / (precision + recall))


def test_the_margin_is_inclusive_and_a_prediction_matches_once():
    assert metrics.true_positives({10}, {15}) == {10}
    assert metrics.true_positives({10}, {16}) == set()
    assert metrics.true_positives({10}, {10}, margin=0) == {10}
    assert metrics.true_positives({10}, {11}, margin=0) == set()
    # one prediction between two true points: the first true point in set order takes it
    assert metrics.true_positives({10, 12}, {11}) == {10}
    # equally close predictions: the smaller is used, the other stays for the next true point
    assert metrics.true_positives({10, 14}, {8, 12}) == {10, 14}


def test_the_matching_follows_set_order_as_tcpdbench_does():
    # annotations {0, 3, 9} iterate as 0, 9, 3 (CPython's set of small ints): 9 takes 7 (14 is further),
    # 3 finds nothing left - TCPDBench's published numbers were computed so; sorted order would give 1.0
    assert metrics.true_positives({0, 3, 9}, {0, 7, 14}) == {0, 9}
    assert metrics.f_measure({1: [3, 9]}, [7, 14]) == pytest.approx(2 / 3)


def test_reporting_nothing_and_reporting_the_annotations():
    annotations = {"a": [30, 60], "b": [31], "c": []}
    # precision 1 (the start matches itself), recall (1/3 + 1/2 + 1) / 3 = 11/18: F1 = 22/29
    assert metrics.f_measure(annotations, []) == pytest.approx(22 / 29)
    assert metrics.f_measure({"a": [30, 60]}, [30, 60]) == 1.0
    assert metrics.covering({"a": [30, 60]}, [30, 60], 100) == 1.0
    assert metrics.covering({"a": []}, [], 1) == 1.0
    # a prediction at 0 (or repeated) is the same as none (or one)
    assert metrics.covering(annotations, [0], 100) == metrics.covering(annotations, [], 100)
    assert metrics.f_measure(annotations, [0, 30, 30]) == metrics.f_measure(annotations, [30])
    assert metrics.covering(annotations, [30, 30], 100) == metrics.covering(annotations, [30], 100)


def test_numpy_integers_and_any_annotator_ids_are_taken():
    annotations = {"6": np.array([10, 20]), 7: (11, 20)}
    assert metrics.f_measure(annotations, np.array([10, 20], dtype=np.int64)) == 1.0
    assert metrics.covering(annotations, [np.int32(10), np.int32(20)], 30) == pytest.approx(
        metrics.covering({1: [10, 20], 2: [11, 20]}, [10, 20], 30))


def test_the_last_index_is_a_change_point_of_one_point():
    assert metrics.partition_from_cps([4], 5) == [{0, 1, 2, 3}, {4}]
    # {0..3} overlaps the whole series by 4/5, {4} by 1/5: (4 x 4/5 + 1 x 1/5) / 5
    assert metrics.covering({1: [4]}, [], 5) == pytest.approx((4 * 4 / 5 + 1 / 5) / 5)


def test_a_long_series_is_scored_by_its_segments_not_its_points():
    # a set of every point of 10^12 observations would never fit in memory
    assert metrics.covering({1: [10 ** 11]}, [5], 10 ** 12) == pytest.approx(
        (10 ** 11 * (10 ** 11 - 5) / 10 ** 12 + 9 * 10 ** 11 * (9 * 10 ** 11) / (10 ** 12 - 5)) / 10 ** 12)


# --------------------------------------------------------------------------
# bad input: one line naming it

@pytest.mark.parametrize("call,message", [
    (lambda: metrics.f_measure({}, []),
     "annotations: {}; expected a mapping of at least one annotator to change points"),
    (lambda: metrics.f_measure([[1]], []),
     "annotations: [[1]]; expected a mapping of at least one annotator to change points"),
    (lambda: metrics.f_measure({"6": [-1]}, []),
     "annotator 6: change point -1 is out of range; expected indexes from 0"),
    (lambda: metrics.f_measure({"6": [1]}, [1.5]),
     "predictions: change point 1.5 is not a whole number; expected 0-based indexes"),
    (lambda: metrics.f_measure({"6": [1]}, [True]),
     "predictions: change point True is not a whole number; expected 0-based indexes"),
    (lambda: metrics.f_measure({"6": [1]}, "12"),
     "predictions: '12' is not a list of change points; expected a list of whole numbers"),
    (lambda: metrics.f_measure({"6": None}, []),
     "annotator 6: None is not a list of change points; expected a list of whole numbers"),
    (lambda: metrics.f_measure({"6": [1]}, [], margin=-1),
     "margin: -1; expected a number of points, at least 0"),
    (lambda: metrics.f_measure({"6": [1]}, [], margin=float("nan")),
     "margin: nan; expected a number of points, at least 0"),
    (lambda: metrics.covering({"6": [3]}, [8], 8),
     "predictions: change point 8 is out of range; expected indexes from 0 to 7 (a series of 8 observations)"),
    (lambda: metrics.covering({"6": [9]}, [], 8),
     "annotator 6: change point 9 is out of range; expected indexes from 0 to 7 (a series of 8 observations)"),
    (lambda: metrics.covering({"6": [3]}, [], 0),
     "n_obs: 0; expected the number of observations, a whole number of at least 1"),
    (lambda: metrics.covering({"6": [3]}, [], 8.0),
     "n_obs: 8.0; expected the number of observations, a whole number of at least 1"),
    (lambda: metrics.partition_from_cps([-1, 3], 8),
     "change points: change point -1 is out of range; expected indexes from 0 to 7 (a series of 8 observations)"),
    (lambda: metrics.cover_single([{1, 2}], [{1}]),
     "segmentations of 2 and 1 points; expected two segmentations of the same points"),
    (lambda: metrics.cover_single([], []),
     "segmentations of 0 and 0 points; expected two segmentations of the same points"),
])
def test_bad_input_is_one_line(call, message):
    with pytest.raises(ValueError) as caught:
        call()
    assert str(caught.value) == message
