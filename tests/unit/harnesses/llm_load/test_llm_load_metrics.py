"""Per-request derived values, statistics, stage aggregates, client-bound flag, JSON safety."""

import array
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


def make(scheduled, sent=None, tokens=(), end=None, usage=None, chunk_tokens=None, prompt=None, planned=10, error=None,
         warmup=False, index=0):
    r = metrics.RequestRecord(0, index, 0, warmup, scheduled, planned, 8)
    r.sent, r.end, r.usage_completion, r.chunk_tokens, r.usage_prompt = sent, end, usage, chunk_tokens, prompt
    r.token_times = array.array("d", tokens)
    if error:
        r.fail(error)
    return r


@pytest.mark.parametrize("p,key", [(0.1, "p0p1"), (1, "p1"), (5, "p5"), (50, "p50"), (99, "p99"), (99.9, "p99p9"), (1e-05, "p1e-05")])
def test_percentile_keys_are_the_llm_d_report_names(p, key):
    assert metrics.percentile_key(p) == key


def test_every_distribution_has_the_documented_percentile_keys():
    stats = metrics.distribution([1.0, 2.0])
    assert set(stats) == {"count", "mean", "stddev", "min", "max", "p0p1", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99",
                          "p99p9"}


def test_a_new_record_has_nothing_measured_yet():
    r = metrics.RequestRecord(2, 7, 1, True, 12.5, 100, 50)
    assert (r.stage, r.index, r.worker, r.warmup, r.scheduled, r.input_tokens, r.max_tokens) == (2, 7, 1, True, 12.5, 100, 50)
    assert r.request_id == "s2-7"
    assert (r.sent, r.connect_s, r.first_byte, r.end, r.status, r.error, r.error_detail, r.timer) == (None,) * 8
    assert (r.usage_prompt, r.usage_completion, r.chunk_tokens) == (None, None, None)
    assert r.reused is False and r.retried is False and r.done_marker is False
    assert r.chars == 0 and r.last_usage_completion == 0
    assert isinstance(r.token_times, array.array) and r.token_times.typecode == "d" and len(r.token_times) == 0
    assert not r.ok and r.output_tokens == 0 and r.output_tokens_source == "chunks" and r.prompt_tokens == 100


def test_fail_keeps_the_first_error_and_its_detail_on_one_line():
    r = make(0.0)
    r.fail("http_500", "  upstream\n  said\tno  ")
    r.fail("timeout", "later")
    assert (r.error, r.error_detail) == ("http_500", "upstream said no")


@pytest.mark.parametrize("detail", [None, "", "  \n\t "])
def test_fail_without_detail_leaves_it_none(detail):
    r = make(0.0)
    r.fail("disconnect", detail)
    assert (r.error, r.error_detail) == ("disconnect", None)


def test_fail_detail_is_cut_to_300_characters():
    r = make(0.0)
    r.fail("http_400", "x" * 299 + "yz" + "w" * 50)
    assert r.error_detail == "x" * 299 + "y"


def test_fail_detail_reads_only_the_first_1000_characters():
    r = make(0.0)
    # 1000 blanks then text: nothing printable in the first 1000 characters
    r.fail("http_400", " " * 1000 + "hidden")
    assert r.error_detail is None


@pytest.mark.parametrize("error,end,ok", [(None, 1.0, True), (None, None, False), ("timeout", 1.0, False), ("timeout", None, False)])
def test_ok_means_ended_without_error(error, end, ok):
    assert make(0.0, end=end, error=error).ok is ok


@pytest.mark.parametrize("usage,chunk_tokens,tokens,count,source", [
    (7, [1, 2], (1.0, 2.0), 7, "usage"),
    (0, [1, 2], (1.0, 2.0), 0, "usage"),
    (None, [1, 2], (1.0, 2.0), 3, "chunk_usage"),
    (None, [], (1.0, 2.0), 2, "chunks"),
    (None, None, (1.0, 2.0, 3.0), 3, "chunks"),
])
def test_output_tokens_prefer_usage_then_chunk_usage_then_chunks(usage, chunk_tokens, tokens, count, source):
    r = make(0.0, tokens=tokens, usage=usage, chunk_tokens=chunk_tokens)
    assert (r.output_tokens, r.output_tokens_source) == (count, source)


@pytest.mark.parametrize("prompt,planned,expected", [(12, 10, 12), (0, 10, 0), (None, 10, 10), (None, None, None)])
def test_prompt_tokens_prefer_the_server_count(prompt, planned, expected):
    assert make(0.0, prompt=prompt, planned=planned).prompt_tokens == expected


@pytest.mark.parametrize("tokens", [(), (1.0,)])
def test_no_gap_without_two_chunks(tokens):
    assert make(0.0, tokens=tokens, usage=5).per_token_gaps() == []


def test_two_chunks_give_one_gap():
    assert make(0.0, tokens=(1.0, 1.5), usage=2).per_token_gaps() == [0.5]


def test_gaps_are_per_chunk_when_there_is_no_token_count_beyond_the_chunks():
    # one token per chunk: the gaps as they are
    assert make(0.0, tokens=(1.0, 1.25, 2.0)).per_token_gaps() == [0.25, 0.75]


@pytest.mark.parametrize("usage", [1, 0])
def test_gaps_count_one_token_each_when_usage_leaves_none_for_the_later_chunks(usage):
    assert make(0.0, tokens=(1.0, 1.25, 2.0), usage=usage).per_token_gaps() == [0.25, 0.75]


def test_usage_of_two_tokens_over_three_chunks_spreads_one_token_over_two_gaps():
    # (2 - 1) tokens over 2 gaps: half a token per gap
    assert make(0.0, tokens=(1.0, 1.25, 2.0), usage=2).per_token_gaps() == [0.5, 1.5]


def test_chunk_tokens_of_another_length_fall_back_to_the_even_spread():
    r = make(0.0, tokens=(1.0, 1.5, 2.0), usage=5, chunk_tokens=[1, 4])
    assert r.per_token_gaps() == [0.25, 0.25]


def test_a_chunk_reported_with_zero_tokens_counts_as_one():
    assert make(0.0, tokens=(1.0, 1.5, 2.0), chunk_tokens=[1, 0, 2]).per_token_gaps() == [0.5, 0.25]


def full_record():
    r = metrics.RequestRecord(1, 2, 3, False, 1000.12345678, 10, 8)
    r.sent = 1000.125
    r.token_times = array.array("d", [1000.25, 1000.375, 1000.5, 1000.625])
    r.end = 1000.75
    r.connect_s = 0.00123456
    r.reused, r.retried, r.status, r.chars = True, True, 200, 42
    r.chunk_tokens = [1, 2, 2, 2]
    r.usage_prompt = 12
    return r


def test_as_dict_gives_times_relative_to_the_origin_and_latencies_in_ms():
    document = full_record().as_dict(1000.0)
    assert document == {
        "stage": 1, "index": 2, "worker": 3, "warmup": False, "request_id": "s1-2",
        "scheduled_s": 0.1234568, "sent_s": 0.125, "first_token_s": 0.25, "end_s": 0.75,
        "send_lag_ms": 1.5432, "ttft_ms": 126.5432, "ttft_from_send_ms": 125.0, "e2e_ms": 626.5432, "e2e_from_send_ms": 625.0,
        "connect_ms": 1.2346, "reused_connection": True, "retried": True, "status": 200, "error": None, "error_detail": None,
        "input_tokens": 12, "input_tokens_planned": 10, "max_tokens": 8, "output_tokens": 7, "output_tokens_source": "chunk_usage",
        "short_output": True, "chunks": 4, "chars": 42, "tokens_per_chunk_mean": 1.75,
        "chunk_gaps_ms": [125.0, 125.0, 125.0], "chunk_tokens": [1, 2, 2, 2],
    }


def test_as_dict_without_gaps_leaves_out_the_per_chunk_lists():
    document = full_record().as_dict(1000.0, keep_gaps=False)
    assert "chunk_gaps_ms" not in document and "chunk_tokens" not in document and document["chunks"] == 4


def test_as_dict_rounds_tokens_per_chunk_to_four_digits():
    r = make(0.0, tokens=(1.0, 2.0, 3.0), usage=7, end=4.0)
    assert r.as_dict(0.0)["tokens_per_chunk_mean"] == 2.3333


def test_as_dict_of_an_unsent_request_has_no_derived_times():
    r = metrics.RequestRecord(0, 5, 0, True, 3.5, None, None)
    r.fail("connect_error", "refused")
    document = r.as_dict(1.0)
    assert document["scheduled_s"] == 2.5 and document["warmup"] is True
    for key in ("sent_s", "first_token_s", "end_s", "send_lag_ms", "ttft_ms", "ttft_from_send_ms", "e2e_ms", "e2e_from_send_ms",
                "connect_ms", "tokens_per_chunk_mean", "chunk_tokens", "input_tokens", "status"):
        assert document[key] is None, key
    assert (document["error"], document["error_detail"], document["output_tokens"], document["output_tokens_source"]) == (
        "connect_error", "refused", 0, "chunks")
    assert document["chunk_gaps_ms"] == [] and document["chunks"] == 0 and document["chars"] == 0


def test_as_dict_of_a_request_that_got_no_token():
    r = make(2.0, sent=2.5, end=3.0, usage=4)
    document = r.as_dict(0.0)
    assert (document["ttft_ms"], document["ttft_from_send_ms"], document["first_token_s"]) == (None, None, None)
    assert (document["e2e_ms"], document["e2e_from_send_ms"], document["send_lag_ms"]) == (1000.0, 500.0, 500.0)


def test_as_dict_of_a_request_with_tokens_but_no_send_time_has_ttft_only_from_the_schedule():
    r = make(2.0, tokens=(2.5,), end=3.0)
    document = r.as_dict(0.0)
    assert (document["ttft_ms"], document["ttft_from_send_ms"], document["e2e_ms"], document["e2e_from_send_ms"]) == (500.0, None, 1000.0, None)


@pytest.mark.parametrize("seconds,ms", [(0.00123456, 1.2346), (0.0000123, 0.0123), (2.0, 2000.0)])
def test_milliseconds_keep_four_decimals(seconds, ms):
    r = make(0.0, sent=seconds)
    assert r.as_dict(0.0)["send_lag_ms"] == ms


def attributes(r):
    return {name: (list(getattr(r, name)) if name == "token_times" else getattr(r, name)) for name in metrics.RequestRecord.__slots__}


def test_record_from_dict_restores_what_as_dict_wrote():
    original = full_record()
    original.fail("disconnect", "closed mid-stream")
    restored = metrics.record_from_dict(json.loads(json.dumps(original.as_dict(1000.0))), 1000.0)
    got, expected = attributes(restored), attributes(original)
    assert got.pop("scheduled") == pytest.approx(expected.pop("scheduled"))
    assert got.pop("connect_s") == pytest.approx(expected.pop("connect_s"), abs=1e-7)
    assert got.pop("token_times") == pytest.approx(expected.pop("token_times"))
    assert isinstance(restored.token_times, array.array)
    assert got == expected
    assert restored.as_dict(1000.0) == original.as_dict(1000.0)


def test_record_from_dict_keeps_the_usage_count_only_when_the_server_gave_it():
    original = make(1.0, sent=1.25, tokens=(1.5, 2.0), end=2.5, usage=9)
    restored = metrics.record_from_dict(original.as_dict(0.0), 0.0)
    assert (restored.usage_completion, restored.output_tokens, restored.output_tokens_source) == (9, 9, "usage")
    assert restored.usage_prompt is None and restored.prompt_tokens == 10
    chunks = metrics.record_from_dict(make(1.0, tokens=(1.5, 2.0), end=2.5).as_dict(0.0), 0.0)
    assert (chunks.usage_completion, chunks.output_tokens, chunks.output_tokens_source) == (None, 2, "chunks")


def test_record_from_dict_rebuilds_chunk_times_from_the_gaps():
    document = {"stage": 0, "index": 1, "worker": 0, "warmup": False, "scheduled_s": 1.0, "first_token_s": 2.0,
                "chunk_gaps_ms": [250.0, 500.0]}
    assert list(metrics.record_from_dict(document, 10.0).token_times) == [12.0, 12.25, 12.75]
    document["chunk_gaps_ms"] = None
    assert list(metrics.record_from_dict(document, 10.0).token_times) == [12.0]


def test_record_from_dict_defaults_what_a_minimal_document_lacks():
    r = metrics.record_from_dict({"stage": 3, "index": 4, "worker": 1, "warmup": True, "scheduled_s": 0.5}, 2.0)
    assert (r.stage, r.index, r.worker, r.warmup, r.scheduled, r.request_id) == (3, 4, 1, True, 2.5, "s3-4")
    assert (r.sent, r.end, r.connect_s, r.status, r.error, r.error_detail, r.chunk_tokens) == (None,) * 7
    assert (r.input_tokens, r.max_tokens, r.usage_prompt, r.usage_completion) == (None,) * 4
    assert r.reused is False and r.retried is False and r.chars == 0 and list(r.token_times) == []


def test_single_value_percentile_is_that_value():
    assert [metrics.percentile([4.0], p) for p in (0, 50, 100)] == [4.0, 4.0, 4.0]


@pytest.mark.parametrize("p,expected", [(0, 1.0), (25, 1.5), (50, 2.0), (75, 6.0), (100, 10.0)])
def test_percentile_of_two_and_three_values(p, expected):
    assert metrics.percentile([1.0, 2.0, 10.0], p) == expected
    assert metrics.percentile([1.0, 3.0], p) == 1.0 + 2.0 * p / 100


def test_distribution_ignores_missing_and_non_finite_values():
    stats = metrics.distribution([3.0, None, float("inf"), 1.0, float("nan"), 2.0])
    assert (stats["count"], stats["mean"], stats["min"], stats["max"], stats["p50"]) == (3, 2.0, 1.0, 3.0, 2.0)
    assert stats["stddev"] == pytest.approx(math.sqrt(2.0 / 3))
    assert metrics.distribution([None]) is None


def test_distribution_min_and_max_are_the_extremes():
    stats = metrics.distribution([5.0, 9.0, 1.0, 7.0])
    assert (stats["min"], stats["max"], stats["p0p1"] >= 1.0, stats["p99p9"] <= 9.0) == (1.0, 9.0, True, True)


def test_scaled_multiplies_everything_but_the_count():
    assert metrics.scaled(None, 1e3) is None
    stats = metrics.scaled(metrics.distribution([1.0, 3.0]), 1000.0)
    assert (stats["count"], stats["mean"], stats["min"], stats["max"], stats["p50"]) == (2, 2000.0, 1000.0, 3000.0, 2000.0)


@pytest.mark.parametrize("value,expected", [(1.5, 1.5), (3, 3), (None, None), ("x", "x"), (math.nan, None), (math.inf, None),
                                            (-math.inf, None)])
def test_finite_or_none(value, expected):
    assert metrics.finite_or_none(value) == expected


def test_sanitize_names_the_path_and_the_value():
    reasons = {}
    clean = metrics.sanitize({"stages": ({"x": math.inf, 3: [math.nan]},), "ok": "text"}, reasons)
    assert clean == {"stages": [{"x": None, 3: [None]}], "ok": "text"}
    assert reasons == {"stages[0].x": "not a finite number (inf)", "stages[0].3[0]": "not a finite number (nan)"}
    top = {}
    assert metrics.sanitize([-math.inf], top) == [None] and top == {"[0]": "not a finite number (-inf)"}


def mixed_stage_records():
    """One warm-up, three successes (3 streamed chunks; 2 chunks; not streamed), one failure, two unfinished."""
    return [
        make(0.0, sent=0.0, tokens=(0.01,), end=0.02, usage=1, warmup=True),
        make(1.0, sent=1.001, tokens=(1.010, 1.012, 1.014), end=1.020, usage=3, prompt=12),
        make(1.1, sent=1.102, tokens=(1.120, 1.124), end=1.130),
        make(1.2, sent=1.203, end=1.250, usage=5, planned=None),
        make(1.3, sent=1.304, end=1.31, error="http_500"),
        make(1.4),
        make(1.5, sent=1.505),
    ]


def mixed_summary(**options):
    return metrics.StageSummary(Stage("constant", rate=8, duration=1), mixed_stage_records(), requested_rate=8.0, origin=0.0, **options)


def test_stage_counts_and_error_classes():
    summary = mixed_summary()
    assert (summary.total, summary.succeeded, summary.failed, summary.warmup_count) == (6, 3, 3, 1)
    assert summary.errors == {"http_500": 1, "unfinished": 2} and list(summary.errors) == ["http_500", "unfinished"]
    assert summary.error_rate == 0.5
    assert summary.usage_reported == 2


def test_stage_latency_distributions_use_the_successful_requests():
    latency = mixed_summary().latency
    expected = {
        "ttft": [0.010, 0.020], "ttft_from_send": [0.009, 0.018],
        "e2e": [0.020, 0.030, 0.050], "e2e_from_send": [0.019, 0.028, 0.047],
        "tpot": [0.002, 0.004], "itl_per_request": [0.002, 0.004], "itl": [0.002, 0.002, 0.004],
        "ntpot": [0.020 / 3, 0.030 / 2, 0.050 / 5], "ntpot_from_send": [0.019 / 3, 0.028 / 2, 0.047 / 5],
    }
    assert set(latency) == set(expected)
    for name, values in expected.items():
        stats = latency[name]
        assert stats["count"] == len(values), name
        assert stats["mean"] == pytest.approx(sum(values) / len(values)), name
        assert (stats["min"], stats["max"]) == (pytest.approx(min(values)), pytest.approx(max(values))), name


def test_stage_lengths_send_lag_and_window():
    summary = mixed_summary()
    assert summary.input_length["count"] == 2 and summary.input_length["mean"] == 11.0        # 12 reported, 10 planned; one unknown
    assert summary.output_length["count"] == 3 and summary.output_length["mean"] == pytest.approx(10 / 3)
    assert summary.send_lag["count"] == 5 and summary.send_lag["mean"] == pytest.approx(0.003)   # every sent request, failed or not
    assert (summary.window_start, summary.window_end) == (1.0, 1.31)
    assert summary.duration == pytest.approx(0.31)


def test_stage_throughputs_are_per_second_of_the_window():
    summary = mixed_summary()
    assert summary.request_throughput == pytest.approx(3 / 0.31)
    assert summary.input_token_throughput == pytest.approx(22 / 0.31)      # an unknown prompt length counts 0
    assert summary.output_token_throughput == pytest.approx(10 / 0.31)
    assert summary.total_token_throughput == pytest.approx(32 / 0.31)


def test_stage_rates_and_rate_error_against_the_requested_rate():
    summary = mixed_summary()
    assert summary.scheduled_rate == pytest.approx(5 / 0.5)
    assert summary.achieved_rate == pytest.approx(4 / 0.504)
    assert summary.rate_error == pytest.approx(4 / 0.504 / 8.0 - 1.0)
    assert summary.null_reasons == {} and not summary.client_bound and summary.client_bound_reasons == []


def test_rate_error_without_a_requested_rate_is_against_the_schedule():
    summary = metrics.StageSummary(Stage("constant", rate=8, duration=1), mixed_stage_records(), origin=0.0)
    assert summary.rate_error == pytest.approx(4 / 0.504 / 10.0 - 1.0)
    assert summary.null_reasons == {"requested_rate": "a closed loop has no requested rate (it is paced by completions)"}


def test_stage_headline_is_in_milliseconds_and_per_second():
    summary = mixed_summary(cpu_utilization=0.25)
    headline = summary.headline()
    names = ("ttft", "ttft_from_send", "tpot", "itl", "itl_per_request", "ntpot", "e2e", "e2e_from_send")
    expected = {"%s_%s_ms" % (name, key): summary.latency[name][key] * 1e3
                for name in names for key in ("mean", "p50", "p90", "p95", "p99", "max")}
    expected.update({"send_lag_%s_ms" % key: summary.send_lag[key] * 1e3 for key in ("mean", "p50", "p99", "p99p9", "max")})
    expected.update(
        total_requests=6, completed_requests=3, failed_requests=3, warmup_requests_excluded=1, error_rate=0.5,
        errors_by_class={"http_500": 1, "unfinished": 2}, requested_rate=8.0, scheduled_rate=summary.scheduled_rate,
        achieved_rate=summary.achieved_rate, rate_error=summary.rate_error, request_throughput=summary.request_throughput,
        input_token_throughput=summary.input_token_throughput, output_token_throughput=summary.output_token_throughput,
        total_token_throughput=summary.total_token_throughput, measured_duration_s=summary.duration,
        output_tokens_mean=summary.output_length["mean"], input_tokens_mean=11.0, usage_reported_requests=2,
        short_outputs=3, short_output_share=1.0, short_output_basis={"chunks": 1, "usage": 2}, client_bound=False,
        client_bound_reasons=[], client_bound_threshold_p99_ms=5.0, client_cpu_utilization=0.25)
    assert headline == expected
    # spot checks by hand
    assert headline["ttft_mean_ms"] == pytest.approx(15.0) and headline["ttft_max_ms"] == pytest.approx(20.0)
    assert headline["e2e_p50_ms"] == pytest.approx(30.0) and headline["itl_p50_ms"] == pytest.approx(2.0)
    assert headline["send_lag_max_ms"] == pytest.approx(5.0) and headline["send_lag_p50_ms"] == pytest.approx(3.0)
    assert headline["scheduled_rate"] == pytest.approx(10.0) and headline["measured_duration_s"] == pytest.approx(0.31)
    assert headline["output_tokens_mean"] == pytest.approx(10 / 3)


def test_stage_summary_adds_the_stage_identity_and_null_reasons():
    stage = Stage("constant", rate=8, duration=1, name="steady", index=4, origin="sweep 1/4")
    summary = metrics.StageSummary(stage, mixed_stage_records(), origin=0.0)
    document = summary.summary()
    assert {k: document[k] for k in ("stage", "name", "load", "rate", "concurrency", "origin")} == {
        "stage": 4, "name": "steady", "load": "constant", "rate": 8, "concurrency": None, "origin": "sweep 1/4"}
    assert document["null_reasons"] == summary.null_reasons and document["null_reasons"] is not summary.null_reasons
    assert document["stopped"] is None
    assert {k: v for k, v in document.items()
            if k not in ("stage", "name", "load", "rate", "concurrency", "origin", "null_reasons", "stopped")} \
        == summary.headline()


def test_stage_summary_keeps_its_inputs():
    records = mixed_stage_records()
    summary = metrics.StageSummary(Stage("constant", rate=8, duration=1), records, 8.0, 2.5, 0.5, 3, 100.0, 110.0, 0.0)
    assert summary.all_records is records and len(summary.records) == 6
    assert (summary.requested_rate, summary.client_bound_p99_ms, summary.cpu_utilization, summary.workers) == (8.0, 2.5, 0.5, 3)
    assert (summary.started_wall, summary.ended_wall, summary.origin) == (100.0, 110.0, 0.0)
    defaults = metrics.StageSummary(Stage("constant", rate=8, duration=1), records)
    assert (defaults.requested_rate, defaults.client_bound_p99_ms, defaults.cpu_utilization, defaults.workers) == (None, 5.0, None, 1)
    assert (defaults.started_wall, defaults.ended_wall, defaults.origin) == (None, None, None)


def test_a_stage_of_only_warmup_gives_every_reason():
    summary = metrics.StageSummary(Stage("constant", rate=8, duration=1), [make(0.0, sent=0.0, end=0.5, warmup=True)], origin=0.0)
    assert (summary.total, summary.succeeded, summary.failed, summary.errors, summary.error_rate) == (0, 0, 0, {}, None)
    assert (summary.window_start, summary.window_end, summary.duration, summary.scheduled_rate, summary.achieved_rate) == (None,) * 5
    assert summary.rate_error is None and not summary.client_bound
    assert summary.null_reasons == {
        "error_rate": "no measured request (the stage ended before its warm-up did)",
        "ttft": "no successful request received a token (non-streaming run, or every request failed)",
        "ttft_from_send": "no successful request received a token",
        "e2e": "no successful request", "e2e_from_send": "no successful request",
        "tpot": "no successful streamed request with two or more output tokens",
        "itl_per_request": "no successful streamed request with two or more content chunks",
        "ntpot": "no successful request with output tokens", "ntpot_from_send": "no successful request with output tokens",
        "itl": "no successful streamed request with two or more content chunks",
        "send_lag": "no request was sent",
        "throughput": "no request finished after its scheduled time",
        "achieved_rate": "fewer than two requests were sent",
        "requested_rate": "a closed loop has no requested rate (it is paced by completions)",
        "short_output_share": "no successful request whose output length is known",
    }
    headline = summary.headline()
    assert all(headline[key] is None for key in headline if key.endswith("_ms") and key != "client_bound_threshold_p99_ms")
    assert (headline["output_tokens_mean"], headline["input_tokens_mean"], headline["measured_duration_s"]) == (None, None, None)
    assert (headline["request_throughput"], headline["total_token_throughput"], headline["usage_reported_requests"]) == (None, None, 0)


def test_requests_that_never_ended_give_no_window():
    records = [make(1.0, sent=1.0), make(2.0, sent=2.0)]
    summary = metrics.StageSummary(Stage("constant", rate=1, duration=5), records, 1.0, origin=0.0)
    assert (summary.window_start, summary.window_end, summary.duration) == (1.0, None, None)
    assert summary.request_throughput is None and summary.output_token_throughput is None
    assert summary.null_reasons["throughput"] == "no request finished after its scheduled time"
    assert summary.errors == {"unfinished": 2} and summary.achieved_rate == 1.0


def test_a_window_of_zero_length_has_no_duration_nor_throughput():
    summary = metrics.StageSummary(Stage("constant", rate=1, duration=5), [make(1.0, sent=1.0, end=1.0, usage=1)], 1.0, origin=0.0)
    assert summary.duration is None and summary.input_token_throughput is None and summary.total_token_throughput is None
    assert summary.headline()["measured_duration_s"] is None
    assert set(summary.null_reasons) == {"throughput", "achieved_rate", "ttft", "ttft_from_send", "tpot", "itl", "itl_per_request"}


@pytest.mark.parametrize("count,first,last,rate", [
    (0, None, None, None), (1, 1.0, 1.0, None), (2, None, 3.0, None), (2, 1.0, None, None), (2, 3.0, 3.0, None), (2, 3.0, 2.0, None),
    (2, 1.0, 3.0, 0.5), (3, 1.0, 3.0, 1.0), (5, 0.0, 2.0, 2.0),
])
def test_rates_count_intervals_between_the_first_and_last(count, first, last, rate):
    assert metrics._rate(count, first, last) == rate


def test_two_sends_are_enough_for_an_achieved_rate():
    records = [make(1.0, sent=1.0, end=1.5), make(1.5, sent=1.75, end=2.0)]
    summary = metrics.StageSummary(Stage("constant", rate=2, duration=1), records, 2.0, client_bound_p99_ms=1000.0, origin=0.0)
    assert (summary.scheduled_rate, summary.achieved_rate, summary.rate_error) == (2.0, 1.0 / 0.75, pytest.approx(1.0 / 0.75 / 2.0 - 1))


def lag_stage(lags, threshold, load="constant", spacing=0.25, start=1.0):
    records = [make(start + i * spacing, sent=start + i * spacing + lag, end=start + i * spacing + lag + 0.5) for i, lag in enumerate(lags)]
    return metrics.StageSummary(Stage(load, rate=1 / spacing, concurrency=2, duration=10), records, None, client_bound_p99_ms=threshold,
                                origin=0.0)


def test_send_lag_p99_above_the_threshold_flags_the_stage():
    summary = lag_stage([0.125] * 5, 124.99)
    assert summary.client_bound and summary.client_bound_reasons == ["send lag p99 125.00 ms > 124.99 ms"]


def test_send_lag_p99_at_the_threshold_does_not_flag_the_stage():
    summary = lag_stage([0.125] * 5, 125.0)
    assert not summary.client_bound and summary.client_bound_reasons == []
    assert summary.headline()["client_bound_threshold_p99_ms"] == 125.0


def test_sends_spread_wider_than_the_schedule_flag_an_open_loop_stage():
    # scheduled 1.0 and 1.5, sent 1.0 and 1.625: 1.6 req/s for a 2 req/s schedule, 125 ms behind; the lag p99 is 123.75 ms
    summary = lag_stage([0.0, 0.125], 124.0, spacing=0.5)
    assert summary.send_lag["p99"] * 1e3 == pytest.approx(123.75)
    assert summary.client_bound_reasons == ["sends at 1.60 req/s, 20.0% below the schedule's 2.00 req/s"]
    assert summary.client_bound


def test_falling_behind_by_exactly_the_threshold_is_not_client_bound():
    summary = lag_stage([0.0, 0.125], 125.0, spacing=0.5)
    assert not summary.client_bound and summary.client_bound_reasons == []


def test_a_closed_loop_is_not_judged_by_its_rate():
    summary = lag_stage([0.0, 0.125], 124.0, load="concurrency", spacing=0.5)
    assert not summary.client_bound and summary.client_bound_reasons == []


def test_achieved_rate_exactly_one_percent_below_the_schedule_is_not_client_bound():
    # 100 sends a second apart, the last one 1 s late: 99 / 100 s = 0.99 x the 1 req/s schedule; lag p99 10 ms
    lags = [0.0] * 99 + [1.0]
    summary = lag_stage(lags, 20.0, spacing=1.0)
    assert summary.achieved_rate == 0.99 and summary.scheduled_rate == 1.0
    assert not summary.client_bound


def test_achieved_rate_within_one_percent_of_the_schedule_is_not_client_bound_however_late():
    lags = [0.0] * 200 + [1.0]
    summary = lag_stage(lags, 5.0, spacing=1.0)
    assert summary.send_lag["p99"] == 0.0 and summary.achieved_rate == pytest.approx(200 / 201.0)
    assert not summary.client_bound
    summary = lag_stage([0.0] * 200 + [3.0], 5.0, spacing=1.0)
    assert summary.client_bound_reasons == ["sends at 0.99 req/s, 1.5% below the schedule's 1.00 req/s"]


def test_both_reasons_are_reported_together():
    summary = lag_stage([0.0, 0.5], 100.0, spacing=0.5)
    assert summary.client_bound_reasons == ["send lag p99 495.00 ms > 100.00 ms", "sends at 1.00 req/s, 50.0% below the schedule's 2.00 req/s"]


def test_time_series_needs_a_duration_and_an_origin():
    records = [make(1.0, sent=1.0, tokens=(1.5,), end=2.5, usage=1)]
    assert metrics.StageSummary(Stage("constant", rate=1, duration=5), records).time_series() is None
    nothing = metrics.StageSummary(Stage("constant", rate=1, duration=5), [make(1.0)], origin=0.0)
    assert nothing.time_series() is None


def test_time_series_of_a_window_over_a_day_is_left_out():
    records = [make(0.0, sent=0.0, end=86400.5, usage=1)]
    assert metrics.StageSummary(Stage("constant", rate=1, duration=5), records, origin=0.0).time_series() is None
    records = [make(0.0, sent=0.0, end=86400.0, usage=1)]
    assert len(metrics.StageSummary(Stage("constant", rate=1, duration=5), records, origin=0.0).time_series()["completions"]) == 86400


def test_time_series_bins_completions_tokens_and_ttfts_per_second_of_the_window():
    records = [
        make(10.2, sent=10.2, end=10.4, error="http_500"),                      # failed: not counted
        make(10.0, sent=10.0, tokens=(10.5, 11.2, 13.0), end=13.0, usage=6),    # 2 tokens per chunk, the last at the window end
        make(10.5, sent=10.6, end=11.5, usage=4),                               # not streamed: its tokens at its end
        make(11.0, sent=11.0, tokens=(11.4,), end=11.6),                         # 1 chunk, 1 token
        make(12.0, sent=12.0, end=12.5, usage=3),                               # not streamed, in the last second
        make(12.25, sent=12.25, tokens=(12.5,), end=12.75, usage=1),
    ]
    summary = metrics.StageSummary(Stage("constant", rate=2, duration=3), records, 2.0, origin=0.0, started_wall=1700000000.0)
    series = summary.time_series()
    assert series["start_wall"] == 1700000000.0
    assert series["completions"] == [0, 2, 3]
    assert series["output_tokens"] == [2.0, 2.0 + 4.0 + 1.0, 2.0 + 3.0 + 1.0]
    assert series["ttfts"] == [[0.5], [pytest.approx(0.4)], [0.25]]


def test_time_series_puts_the_window_last_instant_in_its_last_second():
    # the second request is due, answered and ended at 12.0, the end of a 2 s window
    records = [make(10.0, sent=10.0, tokens=(10.5,), end=11.0, usage=1), make(12.0, sent=12.0, tokens=(12.0,), end=12.0, usage=1)]
    series = metrics.StageSummary(Stage("constant", rate=1, duration=5), records, origin=0.0).time_series()
    assert series == {"start_wall": None, "completions": [0, 2], "output_tokens": [1.0, 1.0], "ttfts": [[0.5], [0.0]]}


def test_time_series_counts_only_measured_requests():
    records = [make(5.0, sent=5.0, tokens=(5.2,), end=5.5, usage=1, warmup=True),
               make(6.0, sent=6.0, tokens=(6.25, 7.5), end=7.75, usage=2)]
    series = metrics.StageSummary(Stage("constant", rate=1, duration=5), records, origin=0.0).time_series()
    assert series == {"start_wall": None, "completions": [0, 1], "output_tokens": [1.0, 1.0], "ttfts": [[0.25], []]}
