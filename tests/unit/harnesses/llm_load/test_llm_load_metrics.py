"""Per-request derived values, statistics, stage aggregates, client-bound flag, JSON safety."""

import json
import math

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import metrics
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import Stage


def record(index, scheduled, sent, tokens, end, warmup=False, error=None, usage=None, chunk_tokens=None):
    r = metrics.RequestRecord(0, index, 0, warmup, scheduled, 10, 8)
    r.sent, r.token_times, r.end, r.status = sent, list(tokens), end, 200
    r.usage_completion, r.chunk_tokens = usage, chunk_tokens
    if error:
        r.fail(error, "detail")
    return r


def test_percentiles_interpolate_like_numpy():
    numpy = pytest.importorskip("numpy")
    values = sorted([3.0, 1.0, 4.0, 1.5, 9.0, 2.6, 5.0, 3.5])
    for p in metrics.PERCENTILES:
        assert metrics.percentile(values, p) == pytest.approx(float(numpy.percentile(values, p)))
    stats = metrics.distribution(values)
    assert stats["p50"] == pytest.approx(float(numpy.median(values))) and stats["stddev"] == pytest.approx(float(numpy.std(values)))
    assert metrics.distribution([]) is None and metrics.distribution([float("nan")]) is None


def test_derived_latencies_from_scheduled_and_from_send():
    r = record(0, 10.0, 10.002, [10.022, 10.024, 10.026, 10.030], 10.031, usage=4)
    assert r.output_tokens == 4 and r.output_tokens_source == "usage"
    gaps = r.per_token_gaps()
    assert gaps == pytest.approx([0.002, 0.002, 0.004])
    document = r.as_dict(10.0)
    assert document["ttft_ms"] == pytest.approx(22.0) and document["ttft_from_send_ms"] == pytest.approx(20.0)
    assert document["send_lag_ms"] == pytest.approx(2.0) and document["e2e_ms"] == pytest.approx(31.0)
    assert document["chunk_gaps_ms"] == pytest.approx([2.0, 2.0, 4.0])
    assert metrics.record_from_dict(json.loads(json.dumps(document)), 10.0).per_token_gaps() == pytest.approx(gaps)


def test_chunks_of_several_tokens_spread_their_gap():
    # server-reported chunk tokens: 1, 3, 2
    r = record(0, 0.0, 0.0, [0.010, 0.016, 0.020], 0.020, usage=6, chunk_tokens=[1, 3, 2])
    assert r.per_token_gaps() == pytest.approx([0.002, 0.002])
    # only the usage total: the later chunks share (6 - 1) tokens evenly
    r = record(0, 0.0, 0.0, [0.010, 0.016, 0.020], 0.020, usage=6)
    assert r.per_token_gaps() == pytest.approx([0.006 / 2.5, 0.004 / 2.5])


def test_stage_summary_excludes_warmup_and_classifies_errors():
    records = [record(i, i * 0.1, i * 0.1 + 0.001, [i * 0.1 + 0.02 + j * 0.002 for j in range(4)], i * 0.1 + 0.03,
                      warmup=i < 3, usage=4) for i in range(10)]
    records[5].fail("http_500")
    records[6].fail("timeout")
    stage = Stage("constant", rate=10, duration=1)
    summary = metrics.StageSummary(stage, records, requested_rate=10.0, client_bound_p99_ms=5.0, origin=0.0)
    assert (summary.total, summary.succeeded, summary.failed, summary.warmup_count) == (7, 5, 2, 3)
    assert summary.errors == {"http_500": 1, "timeout": 1} and summary.error_rate == pytest.approx(2 / 7)
    assert summary.latency["ttft"]["p50"] == pytest.approx(0.02)
    assert summary.latency["ttft_from_send"]["p50"] == pytest.approx(0.019)
    assert summary.latency["tpot"]["mean"] == pytest.approx(0.002)
    assert summary.latency["itl"]["count"] == 15 and summary.latency["itl_per_request"]["count"] == 5
    assert summary.achieved_rate == pytest.approx(10.0) and abs(summary.rate_error) < 1e-9
    assert not summary.client_bound
    headline = summary.headline()
    assert headline["ttft_p50_ms"] == pytest.approx(20.0) and headline["send_lag_p99_ms"] == pytest.approx(1.0)
    json.dumps(summary.summary(), allow_nan=False)


def test_late_sends_flag_the_stage_client_bound():
    records = [record(i, i * 0.01, i * 0.01 + (0.02 if i % 10 == 0 else 0.0001), [i * 0.01 + 0.05], i * 0.01 + 0.06, usage=1)
               for i in range(200)]
    summary = metrics.StageSummary(Stage("constant", rate=100, duration=2), records, 100.0, client_bound_p99_ms=5.0, origin=0.0)
    assert summary.client_bound and "send lag p99" in summary.client_bound_reasons[0]


def test_nothing_measurable_gives_none_with_reasons():
    records = [record(i, i * 0.1, i * 0.1, [], i * 0.1 + 0.01, error="http_500") for i in range(3)]
    summary = metrics.StageSummary(Stage("concurrency", concurrency=2, duration=1), records, None, origin=0.0)
    headline = summary.headline()
    assert headline["ttft_p50_ms"] is None and "ttft" in summary.null_reasons
    assert headline["requested_rate"] is None and "closed loop" in summary.null_reasons["requested_rate"]
    assert headline["error_rate"] == 1.0
    json.dumps(headline, allow_nan=False)


def test_sanitize_replaces_non_finite_numbers_and_says_where():
    reasons = {}
    clean = metrics.sanitize({"a": [1.0, math.nan], "b": {"c": math.inf}}, reasons)
    assert clean == {"a": [1.0, None], "b": {"c": None}}
    assert set(reasons) == {"a[1]", "b.c"}


def test_falling_behind_the_schedule_is_client_bound_but_a_short_stage_noise_is_not():
    # the last 5 of 1000 sends are 400 ms late: the p99 of the lag does not see it, the rate does
    def lag(i):
        return 0.4 if i >= 995 else 1e-4
    stalled = [record(i, i * 0.01, i * 0.01 + lag(i), [i * 0.01 + lag(i) + 0.02], i * 0.01 + lag(i) + 0.03, usage=1)
               for i in range(1000)]
    summary = metrics.StageSummary(Stage("constant", rate=100, duration=10), stalled, 100.0, client_bound_p99_ms=100.0, origin=0.0)
    assert summary.send_lag["p99"] < 0.1
    assert summary.client_bound and "below the schedule" in summary.client_bound_reasons[0]
    # six requests, the last one 3 ms late: 1.2 % below the rate, yet not behind by 5 ms
    short = [record(i, i * 0.05, i * 0.05 + (0.003 if i == 5 else 0.0001), [i * 0.05 + 0.02], i * 0.05 + 0.03, usage=1)
             for i in range(6)]
    summary = metrics.StageSummary(Stage("constant", rate=20, max_requests=6), short, 20.0, client_bound_p99_ms=5.0, origin=0.0)
    assert summary.achieved_rate < 0.99 * 20 and not summary.client_bound
