"""Load models: counts, spacing, seeds, stage ends, warm-up, workers' shares, sweeps."""

import json

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import arrivals
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import ConfigError, Stage, validate_stage

KNOWN = arrivals.known_loads()


def offsets(stage, seed=0, worker=0, workers=1):
    return [(a.index, a.offset, a.warmup) for a in arrivals.arrivals(stage, seed, worker, workers)]


def test_constant_is_evenly_spaced_and_ends_with_its_duration():
    stage = Stage("constant", rate=20, duration=2, warmup=0.5)
    got = offsets(stage)
    assert len(got) == 50                                  # (0.5 + 2) s x 20 req/s
    assert all(abs(got[i][1] - i / 20.0) < 1e-12 for i in range(50))
    assert sum(1 for g in got if g[2]) == 10              # the first 0.5 s is warm-up


def test_max_requests_counts_measured_requests_after_a_counted_warmup():
    stage = Stage("constant", rate=100, max_requests=30, warmup_requests=5)
    got = offsets(stage)
    assert len(got) == 35 and [g[2] for g in got[:6]] == [True] * 5 + [False]


def test_duration_or_max_requests_whichever_first():
    assert len(offsets(Stage("constant", rate=10, duration=1, max_requests=3))) == 3
    assert len(offsets(Stage("constant", rate=10, duration=1, max_requests=300))) == 10


def test_poisson_is_seeded_and_has_its_rate():
    stage = Stage("poisson", rate=50, duration=200, index=0)
    first = offsets(stage, seed=1)
    assert first == offsets(stage, seed=1) and first != offsets(stage, seed=2)
    assert abs(len(first) / 200.0 - 50) < 50 * 0.03
    gaps = [b[1] - a[1] for a, b in zip(first, first[1:])]
    mean = sum(gaps) / len(gaps)
    variance = sum((g - mean) ** 2 for g in gaps) / len(gaps)
    assert abs(variance ** 0.5 / mean - 1) < 0.05            # exponential gaps: coefficient of variation 1
    # another stage index gives another sequence
    assert offsets(Stage("poisson", rate=50, duration=5, index=1), seed=1) != offsets(Stage("poisson", rate=50, duration=5, index=0), seed=1)


@pytest.mark.parametrize("load", ["constant", "poisson"])
def test_workers_share_one_schedule(load):
    stage = Stage(load, rate=40, duration=3)
    single = offsets(stage, seed=3)
    shares = [offsets(stage, seed=3, worker=w, workers=3) for w in range(3)]
    assert sorted(sum(shares, [])) == single
    assert all(index % 3 == w for w, share in enumerate(shares) for index, _o, _w in share)


def test_trace_replay(tmp_path):
    path = tmp_path / "trace.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in [
        {"timestamp": 10.0, "input_tokens": 5, "output_tokens": 3}, {"timestamp": 10.5, "input_tokens": 7},
        {"timestamp": 12.0, "output_tokens": 9, "prompt": "hello"}, {"timestamp": 11.0}]))
    stage = Stage("trace", trace=str(path), duration=100, time_scale=0.5)
    got = list(arrivals.arrivals(stage, 0))
    assert [a.offset for a in got] == [0.0, 0.25, 0.5, 1.0]
    assert [(a.input_tokens, a.output_tokens, a.prompt) for a in got] == [(5, 3, None), (7, None, None), (None, None, None), (None, 9, "hello")]
    path.write_text('{"timestamp": "soon"}\n')
    with pytest.raises(ConfigError, match="line 1: expected an object with a numeric timestamp"):
        list(arrivals.arrivals(stage, 0))


def test_sweep_plan_probes_then_runs_fractions_of_the_saturation_rate():
    sweep = Stage("sweep", concurrency=8, duration=2, sweep_steps=3)
    plain = Stage("constant", rate=5, duration=1)
    planner = arrivals.plan([plain, sweep])
    first = next(planner)
    assert (first.load, first.index) == ("constant", 0)
    probe = planner.send(None)
    assert (probe.load, probe.concurrency, probe.index) == ("concurrency", 8, 1)
    rates = []
    stage = planner.send(100.0)
    while True:
        rates.append((stage.index, stage.load, round(stage.rate, 6)))
        try:
            stage = planner.send(None)
        except StopIteration:
            break
    assert rates == [(2, "constant", 25.0), (3, "constant", 50.0), (4, "constant", 75.0)]


def test_sweep_without_completions_stops_with_a_reason():
    planner = arrivals.plan([Stage("sweep", concurrency=2, duration=1)])
    next(planner)
    with pytest.raises(ConfigError, match="probe completed no request"):
        planner.send(None)


def test_closed_loop_slots_split_the_concurrency():
    assert [arrivals.closed_loop_slots(10, w, 4) for w in range(4)] == [3, 3, 2, 2]


@pytest.mark.parametrize("raw,message", [
    ({"load": "constant", "duration": 1}, "load constant needs a rate"),
    ({"load": "concurrency", "max_requests": 3}, "load concurrency needs a concurrency"),
    ({"load": "constant", "rate": 3}, "give a duration (seconds) or max_requests"),
    ({"load": "burst", "rate": 3, "duration": 1}, "load must be one of"),
    ({"load": "constant", "rate": -1, "duration": 1}, "rate must be > 0"),
    ({"load": "constant", "rate": 1, "duration": 1, "speed": 2}, "unknown option(s) speed"),
    ({"load": "trace", "trace": "/nonexistent", "duration": 1}, "trace file /nonexistent does not exist"),
    ({"load": "constant", "rate": 1, "duration": 1, "warmup": 1, "warmup_requests": 2}, "not both"),
])
def test_stage_validation_errors_name_the_stage(raw, message):
    with pytest.raises(ConfigError, match="stage 3") as info:
        validate_stage(raw, 3, KNOWN)
    assert message in str(info.value)
