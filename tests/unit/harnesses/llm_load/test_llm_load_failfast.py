"""A load in which every request fails for the same reason stops within seconds, says why in one
line, and fails; a success anywhere in the run keeps it going (failures under load are measured)."""

import json
import time

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import base as harness_base
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import (
    client,
    failfast,
    prompts,
    runner,
)
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import Stage
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.distributions import parse_length
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.metrics import RequestRecord

from conftest import run_cli


def finished(error=None, detail=None):
    record = RequestRecord(0, 0, 0, False, 0.0, 1, 1)
    record.end = 1.0
    if error:
        record.fail(error, detail)
    return record


def test_the_streak_stops_after_the_limit_of_one_class():
    streak = failfast.FailureStreak(3)
    assert [streak.add(finished("http_500", "boom")) for _attempt in range(2)] == [False, False]
    assert streak.add(finished("http_422", "no")) is False and streak.count == 1     # another class starts again
    assert streak.add(finished("http_422", "no")) is False
    assert streak.add(finished("cancelled")) is False and streak.count == 2           # cancelled requests do not count
    assert streak.add(finished("http_422", "Unexpected fields")) is True
    assert streak.reason == ("stopped early: 3 requests in a row failed with http_422 and none succeeded "
                             "(Unexpected fields) (stop_after_failures: 3)")
    assert streak.add(finished("http_422")) is False and streak.count == 3            # it stops once


def test_a_success_turns_the_streak_off_for_the_run():
    streak = failfast.FailureStreak(2)
    assert streak.add(finished("timeout")) is False
    assert streak.add(finished()) is False and streak.succeeded and streak.count == 0
    assert [streak.add(finished("timeout")) for _attempt in range(5)] == [False] * 5 and streak.reason is None


@pytest.mark.parametrize("limit", [0, None])
def test_limit_zero_never_stops(limit):
    streak = failfast.FailureStreak(limit)
    assert not any(streak.add(finished("connect_error")) for _attempt in range(100)) and streak.reason is None


def test_the_reason_without_detail():
    streak = failfast.FailureStreak(1)
    assert streak.add(finished("connect_error")) is True
    assert streak.reason == ("stopped early: 1 requests in a row failed with connect_error and none succeeded "
                             "(stop_after_failures: 1)")


def make_client(url, stop_after, timeout=30.0):
    settings = runner.Settings(client.Target(url), "fake-model", "completions", True, None, None, timeout,
                               stop_after_failures=stop_after)
    data = prompts.SyntheticPrompts(parse_length("16"), parse_length("8"), prompts.WordEstimate())
    return runner.LoadClient(settings, data)


def run_stages(load_client, stages):
    async def go():
        results = []
        try:
            for stage in stages:
                results.append(await load_client.run_stage(stage))
        finally:
            load_client.close()
        return results
    return runner.run_on_new_loop(go())


@pytest.mark.parametrize("stage", [Stage("constant", rate=100, duration=60),
                                   Stage("concurrency", concurrency=4, duration=60)])
def test_an_open_or_closed_loop_stops_within_seconds(fake_server, stage):
    server = fake_server(fault=lambda number, request: "http_500")
    load_client = make_client(server.url, 5)
    started = time.monotonic()
    ran, = run_stages(load_client, [stage])
    assert time.monotonic() - started < 15       # a 60 s stage (the bound leaves room for a loaded machine)
    assert load_client.stop_reason.startswith("stopped early: 5 requests in a row failed with http_500")
    # every request failed, and the stage ended long before its 60 s (6,000 requests at 100/s): what was
    # already sent when the fifth failure came back is recorded too (more on a loaded machine)
    assert {r.error for r in ran.records} == {"http_500"} and 5 <= len(ran.records) < 500


def test_requests_still_in_flight_are_cancelled_after_the_grace(fake_server):
    # the first three fail at once, the others hang: they are cancelled STOP_GRACE_S after the stop
    server = fake_server(fault=lambda number, request: "http_500" if number < 3 else "stall")
    load_client = make_client(server.url, 3)
    started = time.monotonic()
    ran, later = run_stages(load_client, [Stage("concurrency", concurrency=4, duration=60),
                                          Stage("constant", rate=10, duration=60)])
    # two 60 s stages; the bound leaves room for a loaded machine
    assert time.monotonic() - started < runner.STOP_GRACE_S + 10
    errors = [r.error for r in ran.records]
    assert errors.count("http_500") == 3 and errors.count("cancelled") == len(errors) - 3 >= 1
    assert all(r.error_detail == "the run stopped early" for r in ran.records if r.error == "cancelled")
    assert later.records == []      # nothing is sent after the stop


def test_a_success_first_keeps_the_run_going(fake_server):
    # the failures are answered a second late: the first request (a few ms) has succeeded before any of
    # them, however loaded the machine
    server = fake_server(ttft=0.001, itl=0.0005,
                         fault=lambda number, request: None if number == 0 else "http_500@1")
    load_client = make_client(server.url, 3)
    ran, = run_stages(load_client, [Stage("constant", rate=20, max_requests=12)])
    assert load_client.stop_reason is None and len(ran.records) == 12 and ran.records[0].ok


def test_the_command_stops_says_why_and_fails(fake_server, tmp_path):
    """Every request refused the same way: on the code before, the 30 s of two stages ran to the end."""
    server = fake_server(fault=lambda number, request: "http_500")
    stages = tmp_path / "stages.json"
    stages.write_text(json.dumps([{"load": "constant", "rate": 50, "duration": 15}, {"load": "constant", "rate": 50,
                                                                                     "duration": 15}]))
    out = tmp_path / "out"
    started = time.monotonic()
    done = run_cli(["--url", server.url, "--model", "fake-model", "--stages", stages, "--no-preflight",
                    "--output", out])
    assert time.monotonic() - started < 20       # 30 s of stages; room for the command's start on a loaded machine
    assert done.returncode == 4
    result = harness_base.validate_output(done.stdout)["@result"]
    reason = ("stopped early: 20 requests in a row failed with http_500 and none succeeded (injected http_500) "
              "(stop_after_failures: 20)")
    assert result["stopped"] == reason and [s["stopped"] for s in result["stages"]] == [reason]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("llm_load: %s (errors: http_500 x" % reason)
    report = json.loads((out / "benchmark_report_stage_0.json").read_text())
    assert report["results"]["observability"]["load_generator"]["stopped_early"] == reason
    assert not (out / "benchmark_report_stage_1.json").exists()


def test_the_command_with_workers_stops_too(fake_server, tmp_path):
    server = fake_server(fault=lambda number, request: "http_500")
    started = time.monotonic()
    done = run_cli(["--url", server.url, "--model", "fake-model", "--rate", "40", "--duration", "30", "--workers", "2",
                    "--stop-after-failures", "4", "--no-preflight", "--output", tmp_path / "out"])
    assert time.monotonic() - started < 15 and done.returncode == 4
    result = harness_base.validate_output(done.stdout)["@result"]
    assert result["stopped"].startswith("stopped early: 4 requests in a row failed with http_500")
    assert result["total_requests"] >= 8      # each worker counts its own streak


def test_stop_after_failures_must_not_be_negative(fake_server, tmp_path):
    server = fake_server()
    done = run_cli(["--url", server.url, "--model", "fake-model", "--rate", "1", "--duration", "1",
                    "--stop-after-failures", "-1", "--output", tmp_path / "out"])
    assert done.returncode == 2
    assert done.stderr.strip() == "llm_load: --stop-after-failures must be >= 0 (0: never stop), got -1"
