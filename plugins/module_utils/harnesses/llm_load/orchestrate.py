# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A whole run: the preflight, then every stage, in this process or in worker processes.

The run is described by a *spec*: a JSON-serializable mapping of the options
(URL, model, data, timeouts; the token as the path of its file, never its value),
so that worker processes rebuild exactly the same client and data from it.

With ``workers`` > 1 each stage is sent to every worker with one absolute start
time (``time.monotonic()`` is the same clock in every process of a machine);
worker w sends the arrivals i with i mod workers = w, writes its records to a
file, and the parent merges them. See ``workers.py`` for the worker's side.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import child_pythonpath
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import arrivals as arrivals_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import client as client_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import distributions
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import failfast
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import metrics
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import prompts as prompts_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import runner
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import ConfigError, Stage

WORKER_MODULE = "ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.workers"
START_DELAY_S = 0.25         # between dispatching a stage and its start, for every worker to be ready


def build_settings(spec):
    target = client_lib.Target(spec["url"], spec.get("ca_file"), spec.get("insecure", False))
    token = client_lib.read_token_file(spec["token_file"]) if spec.get("token_file") else None
    client_lib.check_token_target(target, token)
    return runner.Settings(target, spec["model"], spec.get("endpoint", "completions"), spec.get("stream", True), token,
                           spec.get("extra_body"), spec.get("request_timeout", 600.0), spec.get("max_in_flight", 10000),
                           spec.get("seed", 0), spec.get("keepalive_idle", 4.0), spec.get("request_id_prefix", ""),
                           ignore_eos=spec.get("ignore_eos", "auto"), dropped=spec.get("dropped_fields") or (),
                           stop_after_failures=spec.get("stop_after_failures", failfast.DEFAULT_LIMIT))


def build_prompts(spec):
    counter = prompts_lib.load_tokenizer(spec.get("tokenizer"))
    output_tokens = distributions.parse_length(spec.get("output_tokens", 128), "--output-tokens")
    if spec.get("prompt_file"):
        return prompts_lib.FilePrompts(spec["prompt_file"], output_tokens, counter, spec.get("seed", 0))
    input_tokens = distributions.parse_length(spec.get("prompt_tokens", 128), "--prompt-tokens")
    return prompts_lib.SyntheticPrompts(input_tokens, output_tokens, counter, spec.get("seed", 0),
                                        spec.get("prefix_tokens") or 0, spec.get("prefix_groups") or 0)


def requested_rate(stage):
    """The rate a stage asks for: its ``rate``, a trace's mean rate; None for a closed loop."""
    if stage.load in ("constant", "poisson"):
        return stage.rate
    if stage.load == "trace":
        entries = arrivals_lib.read_trace(stage.trace)
        span = (entries[-1]["timestamp"] - entries[0]["timestamp"]) * stage.time_scale
        return (len(entries) - 1) / span if len(entries) > 1 and span > 0 else None
    return None


class StageOutcome:
    """One stage as run (all workers merged): records, summary, timing."""

    def __init__(self, stage, records, summary, origin, started_wall, ended_wall, cpu_utilization):
        self.stage = stage
        self.records = records
        self.summary = summary
        self.origin = origin
        self.started_wall = started_wall
        self.ended_wall = ended_wall
        self.cpu_utilization = cpu_utilization


class RunResult:
    def __init__(self):
        self.outcomes = []
        self.warnings = []
        self.server_version = None
        self.server_header = None
        self.connections_opened = 0
        self.preflight = None           # {"dropped": [fields], "server_said": [lines]}: what the preflight dropped
        self.ignore_eos_sent = None     # whether the requests carried ignore_eos: true
        self.stopped = None             # why the run stopped early (one line), or None


def summarize(stage, records, origin, started_wall, ended_wall, cpu_utilization, spec, workers):
    summary = metrics.StageSummary(stage, records, requested_rate(stage), spec.get("client_bound_p99_ms", 5.0),
                                   cpu_utilization, workers, started_wall, ended_wall, origin)
    return StageOutcome(stage, records, summary, origin, started_wall, ended_wall, cpu_utilization)


def run(spec, stages, workers=1, progress=None, preflight=True):
    """Run every stage; returns a RunResult. Raises runner.StartError when the target is unusable."""
    progress = progress or (lambda line: None)
    if workers > 1:
        return _run_with_workers(spec, stages, workers, progress, preflight)
    settings = build_settings(spec)
    prompts = build_prompts(spec)
    return runner.run_on_new_loop(_run_in_process(spec, settings, prompts, stages, progress, preflight))


async def _check_target(load_client, spec, result, preflight, progress):
    if preflight:
        result.warnings.extend(await load_client.preflight())
    answer = load_client.preflight_answer
    if answer:
        result.preflight = answer
        line = ("preflight: the server does not accept %s (%s): the requests go without %s (ignore_eos: %s)"
                % (", ".join(answer["dropped"]), "; ".join(answer["server_said"]), "them" if len(answer["dropped"]) > 1
                   else "it", load_client.settings.ignore_eos))
        progress(line)
        result.warnings.append(line)
    result.ignore_eos_sent = load_client.settings.ignore_eos_sent
    if spec.get("server_version"):
        result.server_version = spec["server_version"]
    elif preflight:
        result.server_version = await load_client.server_version()
    result.server_header = load_client.pool.server_header


async def _run_in_process(spec, settings, prompts, stages, progress, preflight):
    result = RunResult()
    load_client = runner.LoadClient(settings, prompts)
    try:
        await _check_target(load_client, spec, result, preflight, progress)
        planner = arrivals_lib.plan(stages)
        stage = next(planner)
        while True:
            progress("stage %d: %s" % (stage.index, stage.describe()))
            ran = await load_client.run_stage(stage)
            ended_wall = time.time()
            outcome = summarize(stage, ran.records, ran.start, ran.started_wall, ended_wall, ran.cpu_utilization, spec, 1)
            if _stage_done(result, outcome, load_client.stop_reason, progress):
                break
            try:
                stage = planner.send(outcome.summary.request_throughput)
            except StopIteration:
                break
        result.connections_opened = load_client.pool.connections_opened
    finally:
        load_client.close()
    return result


def _stage_done(result, outcome, stop_reason, progress):
    """Keep a stage's outcome; True when the run stopped early (no stage after it)."""
    result.outcomes.append(outcome)
    progress(describe_outcome(outcome))
    summary = outcome.summary
    if summary.short_outputs:
        result.warnings.append(
            "stage %d: %d of %d outputs ended before max_tokens (%s)"
            % (outcome.stage.index, summary.short_outputs, summary.short_output_known,
               "ignore_eos was not sent: the server stops at the end-of-sequence token" if not result.ignore_eos_sent
               else "the server stopped before max_tokens despite ignore_eos, or capped the length"))
    if stop_reason:
        summary.stopped = stop_reason
        result.stopped = stop_reason
        progress(stop_reason)
        return True
    return False


def describe_outcome(outcome):
    s = outcome.summary
    head = s.headline()

    def fmt(value, pattern="%.2f"):
        return "-" if value is None else pattern % value
    return ("stage %d done: %d requests (%d failed), ttft p50 %s ms p99 %s ms, send lag p99 %s ms, "
            "achieved %s req/s, throughput %s req/s%s%s"
            % (outcome.stage.index, s.total, s.failed, fmt(head["ttft_p50_ms"]), fmt(head["ttft_p99_ms"]),
               fmt(head["send_lag_p99_ms"]), fmt(s.achieved_rate), fmt(s.request_throughput),
               ", %d short outputs" % s.short_outputs if s.short_outputs else "",
               "; CLIENT-BOUND: %s" % "; ".join(s.client_bound_reasons) if s.client_bound else ""))


# --------------------------------------------------------------------------
# worker processes


class WorkerProcess:
    """A worker: JSON lines in on stdin, JSON lines out on stdout, stderr shared."""

    def __init__(self, spec, index, count, records_dir, python=None):
        message = {"spec": spec, "worker": index, "workers": count, "records_dir": records_dir}
        self.index = index
        self.process = subprocess.Popen([python or sys.executable, "-m", WORKER_MODULE], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=None, env=_worker_environment())
        self.send(message)

    def send(self, message):
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def receive(self):
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait()
            raise RuntimeError("worker %d exited with code %s before answering" % (self.index, code))
        message = json.loads(line)
        if message.get("error"):
            raise RuntimeError("worker %d: %s" % (self.index, message["error"]))
        return message

    def close(self):
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _worker_environment():
    """The parent's environment, with the directory holding ``ansible_collections`` on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = child_pythonpath(env)
    return env


def _run_with_workers(spec, stages, workers, progress, preflight):
    import tempfile  # pylint: disable=import-outside-toplevel

    result = RunResult()
    settings = build_settings(spec)
    build_prompts(spec)   # fail here, once, on bad data options

    async def check():
        load_client = runner.LoadClient(settings, None)
        try:
            await _check_target(load_client, spec, result, preflight, progress)
        finally:
            load_client.close()
    runner.run_on_new_loop(check())
    if result.preflight:
        spec = dict(spec, dropped_fields=result.preflight["dropped"])    # the workers leave them out too

    records_dir = tempfile.mkdtemp(prefix="llm-load-workers-")
    processes = []
    try:
        processes = [WorkerProcess(spec, index, workers, records_dir) for index in range(workers)]
        for process in processes:
            process.receive()   # ready
        planner = arrivals_lib.plan(stages)
        stage = next(planner)
        while True:
            progress("stage %d: %s (%d workers)" % (stage.index, stage.describe(), workers))
            start_at = time.monotonic() + START_DELAY_S
            for process in processes:
                process.send({"stage": stage.to_wire(), "start_at": start_at})
            answers = [process.receive() for process in processes]
            ended_wall = time.time()
            records = []
            for answer in answers:
                with open(answer["records_file"], encoding="utf-8") as handle:
                    records.extend(metrics.record_from_dict(json.loads(line), 0.0) for line in handle if line.strip())
                os.unlink(answer["records_file"])
            records.sort(key=lambda record: record.index)
            cpu = max((a["cpu_utilization"] for a in answers if a.get("cpu_utilization") is not None), default=None)
            started_wall = min(a["started_wall"] for a in answers)
            result.connections_opened += sum(a.get("connections_opened", 0) for a in answers)
            outcome = summarize(stage, records, start_at, started_wall, ended_wall, cpu, spec, workers)
            stopped = next((a["stopped"] for a in answers if a.get("stopped")), None)
            if _stage_done(result, outcome, stopped, progress):
                break
            try:
                stage = planner.send(outcome.summary.request_throughput)
            except StopIteration:
                break
    finally:
        for process in processes:
            process.close()
        try:
            os.rmdir(records_dir)
        except OSError:
            pass
    return result


def worker_main(stdin=None, stdout=None):
    """The worker's side: read the spec, then run each stage it is sent until stdin closes."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout

    def answer(message):
        stdout.write(json.dumps(message) + "\n")
        stdout.flush()

    setup = json.loads(stdin.readline())
    spec, worker, workers = setup["spec"], setup["worker"], setup["workers"]
    try:
        settings = build_settings(spec)
        prompts = build_prompts(spec)
    except ConfigError as exc:
        answer({"error": str(exc)})
        return 2
    load_client = runner.LoadClient(settings, prompts, worker, workers)
    answer({"ready": worker})

    async def serve():
        import asyncio  # pylint: disable=import-outside-toplevel

        loop = asyncio.get_running_loop()
        while True:
            line = await loop.run_in_executor(None, stdin.readline)
            if not line.strip():
                return
            message = json.loads(line)
            stage = Stage(**message["stage"])
            ran = await load_client.run_stage(stage, message["start_at"])
            path = os.path.join(setup["records_dir"], "worker-%d-stage-%d.jsonl" % (worker, stage.index))
            with open(path, "w", encoding="utf-8") as handle:
                for record in ran.records:
                    handle.write(json.dumps(record.as_dict(0.0)) + "\n")
            answer({"records_file": path, "cpu_utilization": ran.cpu_utilization, "started_wall": ran.started_wall,
                    "peak_in_flight": ran.max_in_flight, "connections_opened": load_client.pool.connections_opened,
                    "stopped": load_client.stop_reason})

    async def serve_then_close():
        try:
            await serve()
        finally:
            load_client.close()

    runner.run_on_new_loop(serve_then_close())
    return 0
