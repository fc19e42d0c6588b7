"""Fuzz: a TCPD checkout as the real-corpus benchmark reads it (benchmarks/real_corpus.py: files from another
repository, any bytes or JSON in annotations.json and a dataset file) and the change-point metrics it scores
with (benchmarks/changepoint_metrics.py: any change points, annotations and lengths). A result or one line."""

import json
import math
import os
import sys
import tempfile

from hypothesis import given, strategies as st

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from fuzz_strategies import JSON, SCALARS  # noqa: E402  pylint: disable=wrong-import-position

import changepoint_metrics as metrics  # noqa: E402  pylint: disable=wrong-import-position
import real_corpus  # noqa: E402  pylint: disable=wrong-import-position


def one_line(exc):
    assert "\n" not in str(exc) and str(exc), repr(exc)


POINTS = st.lists(st.integers(min_value=-3, max_value=60) | SCALARS, max_size=6)
# close to TCPD's shapes, then anything
SERIES_ANNOTATIONS = st.dictionaries(st.sampled_from(["6", "7"]), POINTS, max_size=3)
ANNOTATIONS = st.one_of(st.dictionaries(st.sampled_from(["a", "b", "../a", ""]), SERIES_ANNOTATIONS, max_size=2), JSON)
DATASET = st.one_of(
    st.builds(lambda n, raw, n_dim, name: {"name": name, "n_obs": n, "n_dim": n_dim, "series": [{"raw": raw}]},
              st.integers(min_value=-1, max_value=12) | SCALARS,
              st.lists(st.floats(allow_nan=False) | st.none() | SCALARS, max_size=12),
              st.sampled_from([1, 1, 2, 0, "1"]), st.sampled_from(["a", "b"])),
    JSON)
DOCUMENT = st.one_of(ANNOTATIONS.map(json.dumps), DATASET.map(json.dumps), st.binary(max_size=200),
                     st.sampled_from(['{"a": {"6": [NaN]}}', "[" * 3000 + "]" * 3000, "{", "\xff"]))


@given(annotations=DOCUMENT, dataset=DOCUMENT)
def test_a_corpus_of_any_content_is_read_or_refused_in_one_line(annotations, dataset):
    with tempfile.TemporaryDirectory() as root:
        for relative, content in (("annotations.json", annotations), ("datasets/a/a.json", dataset)):
            os.makedirs(os.path.dirname(os.path.join(root, relative)), exist_ok=True)
            with open(os.path.join(root, relative), "wb") as handle:
                handle.write(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
        try:
            corpus = real_corpus.load_corpus(root)
        except real_corpus.CorpusError as exc:
            one_line(exc)
            return
        for item in corpus["series"]:
            assert len(item["values"]) == item["n"] >= 1
            assert all(value is None or math.isfinite(value) for value in item["values"])
            for points in item["annotations"].values():
                assert all(0 <= point < item["n"] for point in points)


@given(annotations=st.dictionaries(st.text(max_size=3) | st.integers(), POINTS, max_size=4) | JSON,
       predictions=POINTS | JSON, n_obs=st.integers(min_value=-1, max_value=60) | SCALARS,
       margin=st.sampled_from([0, 5, 5, 10, -1, 2.5, float("nan"), "5", None]))
def test_the_metrics_answer_a_score_or_one_line(annotations, predictions, n_obs, margin):
    for score in (lambda: metrics.f_measure(annotations, predictions, margin),
                  lambda: metrics.covering(annotations, predictions, n_obs)):
        try:
            value = score()
        except ValueError as exc:
            one_line(exc)
            continue
        assert 0 < value <= 1
