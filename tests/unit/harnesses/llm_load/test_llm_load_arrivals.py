"""Load models: counts, spacing, seeds, stage ends, warm-up, workers' shares, sweeps."""

import itertools
import json
import random

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


def test_an_arrival_defaults_to_no_lengths_and_no_prompt():
    arrival = arrivals.Arrival(4, 0.25, True)
    assert (arrival.index, arrival.offset, arrival.warmup) == (4, 0.25, True)
    assert (arrival.input_tokens, arrival.output_tokens, arrival.prompt) == (None, None, None)


def test_constant_offsets_are_index_over_rate_without_an_entry():
    got = list(itertools.islice(arrivals.constant_offsets(Stage("constant", rate=4), seed=0), 5))
    assert got == [(0.0, None), (0.25, None), (0.5, None), (0.75, None), (1.0, None)]


def test_poisson_first_arrival_is_at_zero_and_gaps_follow_the_seeded_generator():
    # the documented seeding: a generator seeded with (seed, stage index); gaps exponential of mean 1 / rate
    reference = random.Random("7:2:poisson")
    expected, offset = [], 0.0
    for _i in range(6):
        expected.append(offset)
        offset += reference.expovariate(5.0)
    got = [o for o, entry in itertools.islice(arrivals.poisson_offsets(Stage("poisson", rate=5.0, index=2), 7), 6)]
    assert got[0] == 0.0 and got == expected


def test_poisson_schedule_depends_on_the_stage_rate():
    slow = [o for o, _e in itertools.islice(arrivals.poisson_offsets(Stage("poisson", rate=1.0), 1), 50)]
    fast = [o for o, _e in itertools.islice(arrivals.poisson_offsets(Stage("poisson", rate=100.0), 1), 50)]
    assert fast[-1] == pytest.approx(slow[-1] / 100.0)


def write_trace(tmp_path, lines):
    path = tmp_path / "trace.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_read_trace_skips_blank_lines_and_sorts_by_timestamp(tmp_path):
    path = write_trace(tmp_path, ['{"timestamp": 3, "input_tokens": 1}', "", "   ", '{"timestamp": 1.5, "output_tokens": 2}',
                                  '{"timestamp": 2}'])
    assert arrivals.read_trace(path) == [{"timestamp": 1.5, "output_tokens": 2}, {"timestamp": 2}, {"timestamp": 3, "input_tokens": 1}]


def test_read_trace_of_a_missing_file_names_it(tmp_path):
    path = str(tmp_path / "absent.jsonl")
    with pytest.raises(ConfigError) as info:
        arrivals.read_trace(path)
    assert str(info.value) == "trace file %s: No such file or directory" % path


def test_read_trace_without_entries_says_so(tmp_path):
    path = write_trace(tmp_path, ["", "  "])
    with pytest.raises(ConfigError) as info:
        arrivals.read_trace(path)
    assert str(info.value) == "trace file %s: no entries" % path


def test_read_trace_line_that_is_not_json_names_its_line(tmp_path):
    path = write_trace(tmp_path, ['{"timestamp": 1}', "", "{nope"])
    with pytest.raises(ConfigError) as info:
        arrivals.read_trace(path)
    assert str(info.value).startswith("trace file %s line 3: not JSON (" % path)


@pytest.mark.parametrize("line", ['[1, 2]', '{"timestamp": true}', '{"timestamp": "1"}', '{"time": 1}', '{"timestamp": null}'])
def test_read_trace_needs_an_object_with_a_numeric_timestamp(tmp_path, line):
    path = write_trace(tmp_path, ['{"timestamp": 0}', line])
    with pytest.raises(ConfigError) as info:
        arrivals.read_trace(path)
    assert str(info.value) == "trace file %s line 2: expected an object with a numeric timestamp (seconds)" % path


@pytest.mark.parametrize("key", ["input_tokens", "output_tokens"])
@pytest.mark.parametrize("value,shown", [(0, "0"), (-3, "-3"), (True, "True"), (2.5, "2.5"), ("7", "'7'")])
def test_read_trace_lengths_must_be_positive_integers(tmp_path, key, value, shown):
    path = write_trace(tmp_path, [json.dumps({"timestamp": 0, key: value})])
    with pytest.raises(ConfigError) as info:
        arrivals.read_trace(path)
    assert str(info.value) == "trace file %s line 1: %s must be a positive integer, got %s" % (path, key, shown)


def test_read_trace_accepts_one_token_and_absent_or_null_lengths(tmp_path):
    path = write_trace(tmp_path, ['{"timestamp": 0, "input_tokens": 1, "output_tokens": 1}', '{"timestamp": 1, "input_tokens": null}'])
    assert len(arrivals.read_trace(path)) == 2


def test_trace_offsets_start_at_the_first_timestamp_and_are_scaled(tmp_path):
    path = write_trace(tmp_path, ['{"timestamp": 102}', '{"timestamp": 100, "input_tokens": 4}', '{"timestamp": 101}'])
    got = list(arrivals.trace_offsets(Stage("trace", trace=path, time_scale=2.0), 0))
    assert got == [(0.0, {"timestamp": 100, "input_tokens": 4}), (2.0, {"timestamp": 101}), (4.0, {"timestamp": 102})]


def test_registered_load_models():
    models = arrivals.LOAD_MODELS
    assert {name: (model.name, model.open_loop) for name, model in models.items()} == {
        "constant": ("constant", True), "poisson": ("poisson", True), "trace": ("trace", True), "concurrency": ("concurrency", False)}
    assert models["constant"].offsets is arrivals.constant_offsets and models["poisson"].offsets is arrivals.poisson_offsets
    assert models["trace"].offsets is arrivals.trace_offsets and models["concurrency"].offsets is None
    assert models["constant"].description == "evenly spaced arrivals at --rate"
    assert models["poisson"].description == "Poisson arrivals at --rate (seeded)"
    assert models["trace"].description == "timestamps and lengths replayed from a JSONL file"
    assert models["concurrency"].description == "closed loop: --concurrency requests in flight"
    assert arrivals.LoadModel("x", False).offsets is None and arrivals.LoadModel("x", False).description == ""


def test_a_load_model_keeps_what_it_is_given():
    def offsets_of(stage, seed):
        return iter(())
    model = arrivals.LoadModel("burst", True, offsets_of, "bursts")
    assert (model.name, model.open_loop, model.offsets, model.description) == ("burst", True, offsets_of, "bursts")


def test_known_loads_are_the_models_and_planners_sorted():
    assert arrivals.known_loads() == ["concurrency", "constant", "poisson", "sweep", "trace"]


def test_duration_limit_excludes_an_arrival_exactly_at_the_end():
    # rate 4 for 1 s: offsets 0, 0.25, 0.5, 0.75; the one at 1.0 is past the end
    assert [o for _i, o, _w in offsets(Stage("constant", rate=4, duration=1))] == [0.0, 0.25, 0.5, 0.75]
    # the warm-up lengthens the stage
    assert len(offsets(Stage("constant", rate=4, duration=1, warmup=0.5))) == 6


def test_max_requests_limit_is_exact_and_includes_the_counted_warmup():
    got = offsets(Stage("constant", rate=10, max_requests=3, warmup_requests=2))
    assert got == [(0, 0.0, True), (1, 1 / 10, True), (2, 2 / 10, False), (3, 3 / 10, False), (4, 4 / 10, False)]
    assert len(offsets(Stage("constant", rate=10, max_requests=1))) == 1


def test_timed_warmup_covers_arrivals_strictly_before_it():
    got = offsets(Stage("constant", rate=4, duration=1, warmup=0.5))
    assert [w for _i, _o, w in got] == [True, True, False, False, False, False]


def test_a_worker_gets_every_workers_th_arrival_with_the_global_index():
    stage = Stage("constant", rate=10, max_requests=7)
    assert offsets(stage, worker=1, workers=3) == [(1, 0.1, False), (4, 4 / 10, False)]
    assert [i for i, _o, _w in offsets(stage, worker=0, workers=3)] == [0, 3, 6]


def test_trace_arrivals_carry_the_entry_lengths_and_prompt(tmp_path):
    path = write_trace(tmp_path, ['{"timestamp": 0, "input_tokens": 3, "output_tokens": 4, "prompt": "hi"}', '{"timestamp": 1}'])
    got = list(arrivals.arrivals(Stage("trace", trace=path, max_requests=5, warmup_requests=1), 0))
    assert [(a.index, a.offset, a.warmup, a.input_tokens, a.output_tokens, a.prompt) for a in got] == [
        (0, 0.0, True, 3, 4, "hi"), (1, 1.0, False, None, None, None)]


@pytest.mark.parametrize("stage,index,offset,expected", [
    (Stage("concurrency", warmup_requests=2), 1, 99.0, True),
    (Stage("concurrency", warmup_requests=2), 2, 0.0, False),
    (Stage("concurrency", warmup=1.5), 0, 1.4, True),
    (Stage("concurrency", warmup=1.5), 0, 1.5, False),
    (Stage("concurrency"), 0, 0.0, False),
])
def test_closed_loop_warmup_by_count_else_by_time(stage, index, offset, expected):
    assert arrivals.is_warmup(stage, index, offset) is expected


@pytest.mark.parametrize("concurrency,workers,expected", [(4, 1, [4]), (3, 3, [1, 1, 1]), (2, 3, [1, 1, 0]), (7, 2, [4, 3])])
def test_closed_loop_slots_add_up_to_the_concurrency(concurrency, workers, expected):
    assert [arrivals.closed_loop_slots(concurrency, w, workers) for w in range(workers)] == expected


def test_sweep_fractions_are_k_over_steps_plus_one():
    assert arrivals.sweep_fractions(1) == [0.5]
    assert arrivals.sweep_fractions(4) == [0.2, 0.4, 0.6, 0.8]


def test_sweep_expansion_names_and_describes_its_stages():
    sweep = Stage("sweep", concurrency=6, duration=2, warmup=1.0, name="knee")
    expansion = arrivals.expand_sweep(sweep, 3)
    probe = next(expansion)
    assert (probe.load, probe.index, probe.name, probe.concurrency, probe.duration, probe.warmup, probe.sweep_steps) == (
        "concurrency", 3, "knee-probe", 6, 2, 1.0, None)
    assert probe.origin == "sweep probe at concurrency 6"
    stages = [expansion.send(50.0)] + list(expansion)
    # the default is 4 steps: 20, 40, 60, 80 % of the probe's rate
    assert [(s.load, s.index, s.name, s.rate, s.concurrency, s.sweep_steps, s.duration) for s in stages] == [
        ("constant", 4, "knee-1", 10.0, None, None, 2), ("constant", 5, "knee-2", 20.0, None, None, 2),
        ("constant", 6, "knee-3", 30.0, None, None, 2), ("constant", 7, "knee-4", 40.0, None, None, 2)]
    assert stages[0].origin == "sweep 1/4: 20% of the probe's 50.00 req/s"
    assert stages[3].origin == "sweep 4/4: 80% of the probe's 50.00 req/s"


def test_an_unnamed_sweep_is_labelled_by_its_index():
    expansion = arrivals.expand_sweep(Stage("sweep", concurrency=2, duration=1, sweep_steps=1, index=5), 2)
    assert next(expansion).name == "stage-5-probe"
    assert expansion.send(3.0).name == "stage-5-1"


def test_sweep_stages_are_plain_stages_even_with_explicit_steps():
    expansion = arrivals.expand_sweep(Stage("sweep", concurrency=2, duration=1, sweep_steps=3, name="s"), 0)
    assert next(expansion).sweep_steps is None
    stages = [expansion.send(0.5)] + list(expansion)
    assert [(s.load, s.rate, s.sweep_steps) for s in stages] == [("constant", 0.125, None), ("constant", 0.25, None), ("constant", 0.375, None)]
    assert stages[1].origin == "sweep 2/3: 50% of the probe's 0.50 req/s"


@pytest.mark.parametrize("saturation", [None, 0, 0.0, -1.0])
def test_sweep_needs_a_positive_saturation_rate(saturation):
    expansion = arrivals.expand_sweep(Stage("sweep", concurrency=2, duration=1, name="s"), 0)
    next(expansion)
    with pytest.raises(ConfigError) as info:
        expansion.send(saturation)
    assert str(info.value) == "s: the saturation probe completed no request; no sweep rates can be derived"


def test_plan_renumbers_stages_in_run_order():
    stages = [Stage("constant", rate=1, duration=1, index=9), Stage("sweep", concurrency=2, duration=1, sweep_steps=2),
              Stage("poisson", rate=2, duration=1, index=9)]
    planner = arrivals.plan(stages)
    got = [next(planner)]
    got.append(planner.send(None))          # the probe
    got.append(planner.send(10.0))
    got.append(planner.send(None))
    got.append(planner.send(None))
    assert [(s.index, s.load) for s in got] == [(0, "constant"), (1, "concurrency"), (2, "constant"), (3, "constant"), (4, "poisson")]
    assert [round(s.rate, 9) for s in got[2:4]] == [3.333333333, 6.666666667]
    with pytest.raises(StopIteration):
        planner.send(None)
    # the planned stages are copies: the caller's stages keep their index
    assert stages[0].index == 9


def test_plan_numbers_plain_stages_one_after_the_other():
    stages = [Stage("constant", rate=1, duration=1, index=7) for _i in range(3)]
    assert [s.index for s in arrivals.plan(stages)] == [0, 1, 2]


def test_read_trace_reads_utf8_whatever_the_locale(tmp_path, ascii_locale):
    path = tmp_path / "trace.jsonl"
    path.write_bytes(json.dumps({"timestamp": 0, "prompt": "caf\u00e9 \u2615"}, ensure_ascii=False).encode("utf-8"))
    entries = arrivals.read_trace(str(path))
    assert entries == [{"timestamp": 0, "prompt": "caf\u00e9 \u2615"}]
