"""Accuracy of the LLM load harness against a server that times itself, and guidellm 0.8.1 beside it.

The fake OpenAI server (tests/fake_openai.py: TTFT 20 ms, ITL 1 ms, 16 output tokens) runs
pinned to CPU 0; the load generator (this harness, or guidellm) runs pinned to CPU 1; both at
real-time priority (SCHED_FIFO) when run as root, else nice -15: the machine is shared, and other
processes still run on both CPUs. A new
server per measurement records, for every request, when it was fully received and when its
first token was written (time.monotonic(), the clock the harness uses): the harness's TTFT is
compared with the server's per request (joined on X-Request-Id).

Measured, in interleaved rounds (medians across rounds are quoted):
- rate holding: constant rates up to 1,200 req/s (achieved send rate, send lag, client CPU);
- TTFT error = harness TTFT (from the scheduled time) - server TTFT, p50 and p99, at every rate;
  it is send lag + request transit (sent -> the server has read it: includes the server's own
  read delay when it is busy) + response delivery (first token written -> read by the client),
  each reported;
- guidellm 0.8.1 (its own virtualenv, benchmarks/.venv-guidellm, created on first use) at the
  same server and rates: its achieved rate, its TTFT p50/p99 against the server's TTFT p50/p99
  in the same run (guidellm's requests carry no id to join on), and its own send lag
  (request_start - targeted_start of its per-request records).
The CPU used by other processes of the machine during each measurement is recorded: the
machine is shared and that noise is part of the numbers.

Usage: .venv/bin/python benchmarks/llm_load_accuracy.py [--quick] [--rounds N] [--no-guidellm]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

from _common import COLLECTIONS, REPO, record

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(REPO, "tests", "fake_openai.py")
TOKENIZER = os.path.join(REPO, "tests", "fixtures", "llm_load", "tokenizer")
GUIDELLM_VENV = os.path.join(HERE, ".venv-guidellm")
GUIDELLM_VERSION = "0.8.1"
HARNESS = "ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load"
SERVER_CPU, CLIENT_CPU = 0, 1
TTFT_MS, ITL_MS, OUTPUT_TOKENS, PROMPT_TOKENS = 20.0, 1.0, 16, 64


REALTIME_PRIORITY = 10   # SCHED_FIFO priority of the server and the load generator (root only)
NICE = -15               # the fallback: a high CFS priority


def realtime_available():
    return hasattr(os, "sched_setscheduler") and os.geteuid() == 0


def pinned(cpu, mode="fifo"):
    """Pin to ``cpu`` and raise the priority: ``fifo`` (SCHED_FIFO, root only) or ``nice`` (CFS, nice -15).

    The machine is shared: at normal priority another process's test on the same core decided
    when requests were sent and read (send lag p99 4-5 ms at 400 req/s); at real-time priority
    0.25 ms. Real-time throttling still leaves 5 % of each core to the others. SCHED_FIFO does
    not time-slice processes of equal priority on one core, so it would serialize guidellm's own
    processes: guidellm runs in both modes and its better result is the one compared.
    """
    def set_affinity():
        os.sched_setaffinity(0, {cpu})
        if mode == "fifo" and realtime_available():
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(REALTIME_PRIORITY))
            return
        try:
            os.setpriority(os.PRIO_PROCESS, 0, NICE)
        except PermissionError:
            pass
    return set_affinity


def cpu_jiffies():
    with open("/proc/stat", encoding="utf-8") as handle:
        fields = [int(v) for v in handle.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields[:8]) - idle


def process_jiffies(pid):
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return sum(int(v) for v in fields[11:15])   # utime, stime, cutime, cstime
    except OSError:
        return 0


class Server:
    def __init__(self, work):
        self.timings = os.path.join(work, "timings-%s.jsonl" % uuid.uuid4().hex[:8])
        self.process = subprocess.Popen([sys.executable, SERVER, "--port", "0", "--ttft-ms", str(TTFT_MS), "--itl-ms",
                                         str(ITL_MS), "--timings", self.timings],
                                        stdout=subprocess.PIPE, text=True,
                                        preexec_fn=pinned(SERVER_CPU))  # pylint: disable=subprocess-popen-preexec-fn
        self.port = int(self.process.stdout.readline().split()[1])
        self.url = "http://127.0.0.1:%d" % self.port

    def stop(self):
        self.process.terminate()
        self.process.wait(30)
        with open(self.timings, encoding="utf-8") as handle:
            return [json.loads(line) for line in handle]


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return None
    rank = (len(ordered) - 1) * p / 100.0
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def measure(run, server_pid):
    """Run ``run()`` and the CPU share the rest of the machine used meanwhile."""
    ticks = os.sysconf("SC_CLK_TCK")
    before_total, before_server, started = cpu_jiffies(), process_jiffies(server_pid), time.monotonic()
    result, client_jiffies = run()
    wall = time.monotonic() - started
    other = cpu_jiffies() - before_total - (process_jiffies(server_pid) - before_server) - client_jiffies
    result["other_processes_cpu_cores"] = max(0.0, other / ticks / wall)
    return result


def run_harness(url, rate, duration, warmup, work, mode):
    """The harness pinned to the client CPU; returns its output dir, its document and its CPU (jiffies)."""
    out = os.path.join(work, "harness-%s" % uuid.uuid4().hex[:8])
    env = dict(os.environ, PYTHONPATH=COLLECTIONS)
    argv = [sys.executable, "-m", HARNESS, "--url", url, "--model", "fake-model", "--load", "constant", "--rate", str(rate),
            "--duration", str(duration), "--warmup", str(warmup), "--prompt-tokens", str(PROMPT_TOKENS),
            "--output-tokens", str(OUTPUT_TOKENS), "--output", out, "--no-chunk-gaps"]
    with open(out + ".stdout", "w+", encoding="utf-8") as stdout, open(out + ".stderr", "w+", encoding="utf-8") as stderr:
        process = subprocess.Popen(argv, env=env, stdout=stdout, stderr=stderr,
                                   preexec_fn=pinned(CLIENT_CPU, mode))  # pylint: disable=subprocess-popen-preexec-fn
        _pid, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        if process.returncode != 0:
            raise RuntimeError("harness failed (%d): %s" % (process.returncode, stderr.read().strip()[-400:]))
        document = json.loads(stdout.read())
    return out, document, int((usage.ru_utime + usage.ru_stime) * os.sysconf("SC_CLK_TCK"))


def harness_point(rate, duration, warmup, work, mode="fifo"):
    server = Server(work)
    state = {}

    def run():
        out, document, client_jiffies = run_harness(server.url, rate, duration, warmup, work, mode)
        state["out"], state["document"] = out, document
        return {}, client_jiffies
    point = measure(run, server.process.pid)
    timings = {t["request_id"]: t for t in server.stop()}
    result = state["document"]["@result"]
    origin = result["requests_file_origin_monotonic"]
    errors, errors_send, server_ttfts, transits, deliveries, lags = [], [], [], [], [], []
    with open(os.path.join(state["out"], "requests.jsonl"), encoding="utf-8") as handle:
        for line in handle:
            request = json.loads(line)
            timing = timings.get(request["request_id"])
            if request["warmup"] or request["error"] or timing is None or timing["first_token_sent"] is None:
                continue
            server_ttft = (timing["first_token_sent"] - timing["received"]) * 1e3
            server_ttfts.append(server_ttft)
            errors.append(request["ttft_ms"] - server_ttft)
            errors_send.append(request["ttft_from_send_ms"] - server_ttft)
            # the error's three parts: send lag + request transit (sent -> the server has read it)
            # + response delivery (the server writes the first token -> the client has read it)
            lags.append(request["send_lag_ms"])
            transits.append((timing["received"] - (origin + request["sent_s"])) * 1e3)
            deliveries.append(((origin + request["first_token_s"]) - timing["first_token_sent"]) * 1e3)
            assert -1e-3 < transits[-1] < 1e3 and -1e-3 < deliveries[-1] < 1e3   # one clock: causality holds
    shutil.rmtree(state["out"], ignore_errors=True)
    point.update(
        tool="llm_load", scheduling=mode, requested_rate=rate, achieved_rate=result["achieved_rate"], rate_error=result["rate_error"],
        completed_throughput=result["request_throughput"], requests=result["total_requests"],
        failed=result["failed_requests"], client_bound=result["client_bound"],
        client_cpu_utilization=result["client_cpu_utilization"], send_lag_p50_ms=result["send_lag_p50_ms"],
        send_lag_p99_ms=result["send_lag_p99_ms"], ttft_p50_ms=result["ttft_p50_ms"], ttft_p99_ms=result["ttft_p99_ms"],
        server_ttft_p50_ms=percentile(server_ttfts, 50), server_ttft_p99_ms=percentile(server_ttfts, 99),
        ttft_error_p50_ms=percentile(errors, 50), ttft_error_p99_ms=percentile(errors, 99),
        ttft_from_send_error_p50_ms=percentile(errors_send, 50), ttft_from_send_error_p99_ms=percentile(errors_send, 99),
        transit_p50_ms=percentile(transits, 50), transit_p99_ms=percentile(transits, 99),
        delivery_p50_ms=percentile(deliveries, 50), delivery_p99_ms=percentile(deliveries, 99),
        joined_requests=len(errors))
    return point


# --------------------------------------------------------------------------
# guidellm


def guidellm_bin():
    path = os.path.join(GUIDELLM_VENV, "bin", "guidellm")
    if not os.path.exists(path):
        subprocess.run(["python3.11", "-m", "venv", GUIDELLM_VENV], check=True)
        subprocess.run([os.path.join(GUIDELLM_VENV, "bin", "python"), "-m", "pip", "install", "-q",
                        "guidellm==%s" % GUIDELLM_VERSION], check=True)
    return path


def guidellm_point(rate, duration, work, mode):
    server = Server(work)
    output = os.path.join(work, "guidellm-%s.json" % uuid.uuid4().hex[:8])
    argv = [guidellm_bin(), "run",
            "--backend", "kind=openai_http,target=%s,model=fake-model" % server.url,
            "--profile", "kind=constant,rate=%s" % rate,
            "--constraint", "kind=max_duration,seconds=%s" % duration,
            "--data", "kind=synthetic_text,prompt_tokens=%d,output_tokens=%d" % (PROMPT_TOKENS, OUTPUT_TOKENS),
            "--tokenizer", "kind=huggingface_auto,model=%s" % TOKENIZER,
            "--output", "kind=json,path=%s" % output, "--disable-console-interactive"]

    def run():
        process = subprocess.Popen(argv, env=dict(os.environ, HF_HUB_OFFLINE="1"), cwd=work, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True,
                                   preexec_fn=pinned(CLIENT_CPU, mode))  # pylint: disable=subprocess-popen-preexec-fn
        _pid, status, usage = os.wait4(process.pid, 0)
        stderr = process.stderr.read()
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            raise RuntimeError("guidellm failed (%d): %s" % (process.returncode, stderr.strip()[-400:]))
        return {}, int((usage.ru_utime + usage.ru_stime) * os.sysconf("SC_CLK_TCK"))
    point = measure(run, server.process.pid)
    timings = server.stop()
    with open(output, encoding="utf-8") as handle:
        document = json.load(handle)
    os.unlink(output)
    benchmark = document["benchmarks"][0]
    metrics = benchmark["metrics"]
    ttft = metrics["time_to_first_token_ms"]["successful"]
    lags, ttfts_scheduled = [], []
    for request in (benchmark.get("requests") or {}).get("successful") or []:
        t = request["info"]["timings"]
        if t.get("targeted_start") and t.get("request_start"):
            lags.append((t["request_start"] - t["targeted_start"]) * 1e3)
            if t.get("first_token_iteration"):
                ttfts_scheduled.append((t["first_token_iteration"] - t["targeted_start"]) * 1e3)
    server_ttfts = [(t["first_token_sent"] - t["received"]) * 1e3 for t in timings if t["first_token_sent"]]
    totals = metrics["request_totals"]
    duration_s = benchmark.get("duration") or duration
    achieved = totals["total"] / duration_s if duration_s else None
    point.update(
        tool="guidellm %s" % document["metadata"]["guidellm_version"], scheduling=mode, requested_rate=rate, achieved_rate=achieved,
        rate_error=achieved / rate - 1 if achieved else None, requests=totals["total"], failed=totals["errored"],
        completed_throughput=metrics["requests_per_second"]["successful"]["mean"],
        ttft_p50_ms=ttft["median"], ttft_p99_ms=ttft["percentiles"]["p99"],
        server_ttft_p50_ms=percentile(server_ttfts, 50), server_ttft_p99_ms=percentile(server_ttfts, 99),
        ttft_p50_minus_server_p50_ms=ttft["median"] - percentile(server_ttfts, 50),
        ttft_p99_minus_server_p99_ms=ttft["percentiles"]["p99"] - percentile(server_ttfts, 99),
        send_lag_p50_ms=percentile(lags, 50), send_lag_p99_ms=percentile(lags, 99), sampled_requests=len(lags),
        ttft_from_scheduled_p50_ms=percentile(ttfts_scheduled, 50), ttft_from_scheduled_p99_ms=percentile(ttfts_scheduled, 99),
        client_cpu_utilization=None)
    return point


def medians(points, keys):
    summary = {}
    for key in keys:
        values = [p[key] for p in points if isinstance(p.get(key), (int, float)) and not isinstance(p.get(key), bool)]
        summary[key] = statistics.median(values) if values else None
    summary["client_bound_rounds"] = sum(1 for p in points if p.get("client_bound"))
    summary["rounds"] = len(points)
    return summary


HARNESS_KEYS = ("achieved_rate", "rate_error", "completed_throughput", "send_lag_p50_ms", "send_lag_p99_ms",
                "client_cpu_utilization", "ttft_p50_ms", "ttft_p99_ms", "server_ttft_p50_ms", "server_ttft_p99_ms",
                "ttft_error_p50_ms", "ttft_error_p99_ms", "ttft_from_send_error_p50_ms", "ttft_from_send_error_p99_ms",
                "transit_p50_ms", "transit_p99_ms", "delivery_p50_ms", "delivery_p99_ms", "other_processes_cpu_cores")
GUIDELLM_KEYS = ("achieved_rate", "rate_error", "completed_throughput", "ttft_p50_ms", "ttft_p99_ms", "server_ttft_p50_ms",
                 "server_ttft_p99_ms", "ttft_p50_minus_server_p50_ms", "ttft_p99_minus_server_p99_ms", "send_lag_p50_ms",
                 "send_lag_p99_ms", "ttft_from_scheduled_p50_ms", "ttft_from_scheduled_p99_ms", "other_processes_cpu_cores")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="short stages (a smoke run, not for publication)")
    parser.add_argument("--no-guidellm", action="store_true")
    parser.add_argument("--rates", help="comma-separated harness rates (default 100,200,400,700,1000,1200)")
    parser.add_argument("--resummarize", metavar="JSON", help="recompute the summary of a results file's rounds")
    options = parser.parse_args()
    if options.resummarize:
        with open(options.resummarize, encoding="utf-8") as handle:
            previous = json.load(handle)
        record("llm_load_accuracy", summarize(previous["rounds"], previous["setup"]))
        return
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("this benchmark pins the server and the client to two different CPUs: it needs 2")
    duration, warmup = (3, 1) if options.quick else (10, 2)
    harness_rates = [int(r) for r in options.rates.split(",")] if options.rates else [100, 200, 400, 700, 1000, 1200]
    guidellm_rates = [] if options.no_guidellm else [50, 100, 200]
    work = tempfile.mkdtemp(prefix="llm-load-accuracy-")
    raw = {"llm_load": {}, "llm_load_nice": {}, "guidellm": {}, "guidellm_nice": {}}
    modes = ["fifo", "nice"] if realtime_available() else ["nice"]
    try:
        for round_index in range(options.rounds):
            for rate in harness_rates:
                point = harness_point(rate, duration, warmup, work, modes[0])
                raw["llm_load"].setdefault(str(rate), []).append(point)
                print("round %d llm_load %s %5d req/s: achieved %.1f, send lag p99 %.2f ms, TTFT error p50 %.2f p99 %.2f ms, "
                      "cpu %.0f%%, others %.2f cores" % (round_index, modes[0], rate, point["achieved_rate"],
                                                         point["send_lag_p99_ms"], point["ttft_error_p50_ms"],
                                                         point["ttft_error_p99_ms"], 100 * point["client_cpu_utilization"],
                                                         point["other_processes_cpu_cores"]), file=sys.stderr)
            for rate in [r for r in harness_rates if r in (400, 1000)] if len(modes) > 1 else []:
                point = harness_point(rate, duration, warmup, work, "nice")
                raw["llm_load_nice"].setdefault(str(rate), []).append(point)
                print("round %d llm_load nice %5d req/s: achieved %.1f, send lag p99 %.2f ms, TTFT error p50 %.2f p99 %.2f ms, "
                      "others %.2f cores" % (round_index, rate, point["achieved_rate"], point["send_lag_p99_ms"],
                                             point["ttft_error_p50_ms"], point["ttft_error_p99_ms"],
                                             point["other_processes_cpu_cores"]), file=sys.stderr)
            for mode in modes:
                for rate in guidellm_rates:
                    point = guidellm_point(rate, duration, work, mode)
                    raw["guidellm" if mode == modes[0] else "guidellm_nice"].setdefault(str(rate), []).append(point)
                    print("round %d guidellm %s %5d req/s: achieved %.1f, TTFT p50 %.1f ms (server %.1f), send lag p99 %s ms, "
                          "others %.2f cores" % (round_index, mode, rate, point["achieved_rate"], point["ttft_p50_ms"],
                                                 point["server_ttft_p50_ms"], point["send_lag_p99_ms"],
                                                 point["other_processes_cpu_cores"]), file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    record("llm_load_accuracy", summarize(raw, {
        "server": "tests/fake_openai.py on CPU %d" % SERVER_CPU, "client": "CPU %d" % CLIENT_CPU,
        "scheduling": modes, "server_ttft_ms": TTFT_MS, "server_itl_ms": ITL_MS, "output_tokens": OUTPUT_TOKENS,
        "prompt_tokens": PROMPT_TOKENS, "stage_duration_s": duration, "warmup_s": warmup,
        "rounds": options.rounds, "guidellm_version": GUIDELLM_VERSION if guidellm_rates else None,
        "quiet_round": "other processes used less than %.2f of a core" % QUIET_CORES}))


QUIET_CORES = 0.2


def goals_of(summary):
    held = [int(rate) for rate, s in summary.items()
            if s["rate_error"] is not None and abs(s["rate_error"]) <= 0.01 and s["client_bound_rounds"] * 2 <= s["rounds"]]
    at400 = summary.get("400") or {}
    return {
        "highest_rate_held_within_1pct_not_client_bound": max(held) if held else None,
        "highest_rate_held_within_1pct": max((int(r) for r, s in summary.items()
                                              if s["rate_error"] is not None and abs(s["rate_error"]) <= 0.01), default=None),
        "ttft_error_p50_ms_at_400": at400.get("ttft_error_p50_ms"),
        "ttft_error_p99_ms_at_400": at400.get("ttft_error_p99_ms"),
        "ttft_goal_met": at400.get("ttft_error_p50_ms") is not None and at400["ttft_error_p50_ms"] <= 2
        and at400["ttft_error_p99_ms"] <= 5,
    }


def summarize(raw, setup):
    """Medians over every round, and over the quiet rounds only (the machine is shared)."""
    every = {rate: medians(points, HARNESS_KEYS) for rate, points in raw["llm_load"].items()}
    quiet_points = {rate: [p for p in points if p["other_processes_cpu_cores"] < QUIET_CORES]
                    for rate, points in raw["llm_load"].items()}
    quiet = {rate: medians(points, HARNESS_KEYS) for rate, points in quiet_points.items() if points}
    return {
        "setup": setup,
        "goals": {"all_rounds": goals_of(every), "quiet_rounds": goals_of(quiet) if quiet else None},
        "medians": {"llm_load": every, "llm_load_quiet_rounds": quiet,
                    "llm_load_nice": {rate: medians(points, HARNESS_KEYS) for rate, points in raw.get("llm_load_nice", {}).items()},
                    "guidellm": {rate: medians(points, GUIDELLM_KEYS) for rate, points in raw["guidellm"].items()},
                    "guidellm_nice": {rate: medians(points, GUIDELLM_KEYS)
                                      for rate, points in raw.get("guidellm_nice", {}).items()}},
        "rounds": raw,
    }


if __name__ == "__main__":
    main()
