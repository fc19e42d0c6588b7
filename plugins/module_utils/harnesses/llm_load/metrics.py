# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-request records and the aggregates of a stage (definitions: docs/llm-load.md).

Every time is a ``time.monotonic()`` value (CLOCK_MONOTONIC, shared by all the
processes of the machine, so worker records merge as they are). Latencies are
measured from the request's *scheduled* time (the headline: free of coordinated
omission) and from its *actual* send time; their difference is the send lag.

Percentiles interpolate linearly between the closest ranks (numpy's default):
rank = (n - 1) * p / 100. Nothing here returns NaN or infinity: a value that
cannot be computed is ``None`` and its reason is kept in ``null_reasons``.
"""

from __future__ import annotations

import array
import math

PERCENTILES = (0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9)


def percentile_key(p):
    """``p0p1``, ``p1``, ``p99p9`` (the llm-d report's names)."""
    return "p" + ("%g" % p).replace(".", "p")


class RequestRecord:
    """One request, as the client saw it."""

    __slots__ = ("stage", "index", "worker", "warmup", "scheduled", "sent", "connect_s", "reused", "retried",
                 "first_byte", "token_times", "chunk_tokens", "end", "status", "error", "error_detail",
                 "input_tokens", "max_tokens", "usage_prompt", "usage_completion", "chars", "request_id",
                 "timer", "done_marker", "last_usage_completion")

    def __init__(self, stage, index, worker, warmup, scheduled, input_tokens, max_tokens):
        self.stage = stage
        self.index = index
        self.worker = worker
        self.warmup = warmup
        self.scheduled = scheduled
        self.sent = None
        self.connect_s = None
        self.reused = False
        self.retried = False
        self.first_byte = None
        self.token_times = array.array("d")   # one time per content chunk (8 bytes each, not a float object)
        self.chunk_tokens = None       # tokens per content chunk, when the server reports them
        self.end = None
        self.status = None
        self.error = None
        self.error_detail = None
        self.input_tokens = input_tokens
        self.max_tokens = max_tokens
        self.usage_prompt = None
        self.usage_completion = None
        self.chars = 0
        self.request_id = "s%d-%d" % (stage, index)
        self.timer = None
        self.done_marker = False
        self.last_usage_completion = 0

    def fail(self, error, detail=None):
        """Keep the first error of a request; its detail (often the server's own words) as one line."""
        if self.error is None:
            self.error = error
            self.error_detail = " ".join((detail or "")[:1000].split())[:300] or None

    # -- derived values (seconds)

    @property
    def ok(self):
        return self.error is None and self.end is not None

    @property
    def output_tokens(self):
        if self.usage_completion is not None:
            return self.usage_completion
        if self.chunk_tokens:
            return sum(self.chunk_tokens)
        return len(self.token_times)

    @property
    def output_tokens_source(self):
        if self.usage_completion is not None:
            return "usage"
        return "chunk_usage" if self.chunk_tokens else "chunks"

    @property
    def output_tokens_known(self):
        """Whether the output's length is known: the server's usage, or a streamed response's chunks."""
        return self.usage_completion is not None or bool(self.chunk_tokens) or len(self.token_times) > 0

    @property
    def short_output(self):
        """A successful output that ended before ``max_tokens`` (None: not successful, or its length unknown)."""
        if not self.ok or not self.max_tokens or not self.output_tokens_known:
            return None
        return self.output_tokens < self.max_tokens

    @property
    def prompt_tokens(self):
        return self.usage_prompt if self.usage_prompt is not None else self.input_tokens

    def per_token_gaps(self):
        """One value per gap between content chunks: the gap divided by the tokens of the
        later chunk (reported per chunk, else assumed even from the usage count, else 1)."""
        times = self.token_times
        if len(times) < 2:
            return []
        if self.chunk_tokens and len(self.chunk_tokens) == len(times):
            weights = self.chunk_tokens[1:]
        else:
            later = self.output_tokens - 1
            average = later / float(len(times) - 1) if later > 0 else 1.0
            weights = [average] * (len(times) - 1)
        return [(times[j] - times[j - 1]) / (weights[j - 1] or 1.0) for j in range(1, len(times))]

    def as_dict(self, origin, keep_gaps=True):
        """A JSON-serializable record, times relative to ``origin`` (seconds)."""
        def rel(value):
            return None if value is None else round(value - origin, 7)
        document = {
            "stage": self.stage, "index": self.index, "worker": self.worker, "warmup": self.warmup,
            "request_id": self.request_id, "scheduled_s": rel(self.scheduled), "sent_s": rel(self.sent),
            "first_token_s": rel(self.token_times[0]) if self.token_times else None, "end_s": rel(self.end),
            "send_lag_ms": _ms(self.sent - self.scheduled) if self.sent is not None else None,
            "ttft_ms": _ms(self.token_times[0] - self.scheduled) if self.token_times else None,
            "ttft_from_send_ms": _ms(self.token_times[0] - self.sent) if self.token_times and self.sent is not None else None,
            "e2e_ms": _ms(self.end - self.scheduled) if self.end is not None else None,
            "e2e_from_send_ms": _ms(self.end - self.sent) if self.end is not None and self.sent is not None else None,
            "connect_ms": _ms(self.connect_s) if self.connect_s is not None else None,
            "reused_connection": self.reused, "retried": self.retried,
            "status": self.status, "error": self.error, "error_detail": self.error_detail,
            "input_tokens": self.prompt_tokens, "input_tokens_planned": self.input_tokens,
            "max_tokens": self.max_tokens, "output_tokens": self.output_tokens,
            "output_tokens_source": self.output_tokens_source, "short_output": self.short_output,
            "chunks": len(self.token_times), "chars": self.chars,
            "tokens_per_chunk_mean": round(self.output_tokens / float(len(self.token_times)), 4) if self.token_times else None,
        }
        if keep_gaps:
            times = self.token_times
            document["chunk_gaps_ms"] = [_ms(times[j] - times[j - 1]) for j in range(1, len(times))]
            document["chunk_tokens"] = self.chunk_tokens
        return document


def record_from_dict(document, origin):
    """The inverse of ``as_dict`` (used to merge the records of worker processes)."""
    record = RequestRecord(document["stage"], document["index"], document["worker"], document["warmup"],
                           _abs(document["scheduled_s"], origin), document.get("input_tokens_planned"),
                           document.get("max_tokens"))
    record.sent = _abs(document.get("sent_s"), origin)
    record.end = _abs(document.get("end_s"), origin)
    record.connect_s = None if document.get("connect_ms") is None else document["connect_ms"] / 1e3
    record.reused = document.get("reused_connection", False)
    record.retried = document.get("retried", False)
    record.status = document.get("status")
    record.error = document.get("error")
    record.error_detail = document.get("error_detail")
    record.chars = document.get("chars", 0)
    first = _abs(document.get("first_token_s"), origin)
    if first is not None:
        times = [first]
        for gap in document.get("chunk_gaps_ms") or []:
            times.append(times[-1] + gap / 1e3)
        record.token_times = array.array("d", times)
    record.chunk_tokens = document.get("chunk_tokens")
    if document.get("output_tokens_source") == "usage":
        record.usage_completion = document.get("output_tokens")
    if document.get("input_tokens") != document.get("input_tokens_planned"):
        record.usage_prompt = document.get("input_tokens")
    return record


def _abs(value, origin):
    return None if value is None else value + origin


def _ms(seconds):
    return round(seconds * 1e3, 4)


# --------------------------------------------------------------------------
# statistics


def percentile(ordered, p):
    """Linear interpolation between closest ranks of a sorted, non-empty list."""
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * p / 100.0
    low = int(math.floor(rank))
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def distribution(values):
    """count, mean, stddev (population), min, max and every percentile of ``PERCENTILES``;
    None when there is no value."""
    values = [v for v in values if v is not None and math.isfinite(v)]
    if not values:
        return None
    ordered = sorted(values)
    count = len(ordered)
    mean = math.fsum(ordered) / count
    variance = math.fsum((v - mean) ** 2 for v in ordered) / count
    document = {"count": count, "mean": mean, "stddev": math.sqrt(variance), "min": ordered[0], "max": ordered[-1]}
    for p in PERCENTILES:
        document[percentile_key(p)] = percentile(ordered, p)
    return document


def scaled(stats, factor):
    """A distribution in another unit (e.g. seconds -> milliseconds); count unchanged."""
    if stats is None:
        return None
    return {k: (v if k == "count" else v * factor) for k, v in stats.items()}


def _rate(count, first, last):
    if count < 2 or first is None or last is None or last <= first:
        return None
    return (count - 1) / (last - first)


# --------------------------------------------------------------------------
# a stage's aggregates

LATENCY_METRICS = (
    # name, per-record function (seconds), why it can be missing
    ("ttft", lambda r: r.token_times[0] - r.scheduled if r.token_times else None,
     "no successful request received a token (non-streaming run, or every request failed)"),
    ("ttft_from_send", lambda r: r.token_times[0] - r.sent if r.token_times else None,
     "no successful request received a token"),
    ("e2e", lambda r: r.end - r.scheduled, "no successful request"),
    ("e2e_from_send", lambda r: r.end - r.sent, "no successful request"),
    ("tpot", lambda r: ((r.token_times[-1] - r.token_times[0]) / (r.output_tokens - 1)
                        if r.token_times and r.output_tokens > 1 else None),
     "no successful streamed request with two or more output tokens"),
    ("itl_per_request", lambda r: _mean_or_none(r.per_token_gaps()),
     "no successful streamed request with two or more content chunks"),
    ("ntpot", lambda r: (r.end - r.scheduled) / r.output_tokens if r.output_tokens > 0 else None,
     "no successful request with output tokens"),
    ("ntpot_from_send", lambda r: (r.end - r.sent) / r.output_tokens if r.output_tokens > 0 else None,
     "no successful request with output tokens"),
)


def _mean_or_none(values):
    return math.fsum(values) / len(values) if values else None


class StageSummary:
    """Aggregates of the measured (not warm-up) requests of one stage."""

    def __init__(self, stage, records, requested_rate=None, client_bound_p99_ms=5.0, cpu_utilization=None,
                 workers=1, started_wall=None, ended_wall=None, origin=None):
        self.stage = stage
        self.all_records = records
        self.records = [r for r in records if not r.warmup]
        self.warmup_count = len(records) - len(self.records)
        self.requested_rate = requested_rate
        self.client_bound_p99_ms = client_bound_p99_ms
        self.cpu_utilization = cpu_utilization
        self.workers = workers
        self.started_wall = started_wall
        self.ended_wall = ended_wall
        self.origin = origin
        self.stopped = None     # why the run stopped early in this stage (one line), set by the caller
        self.null_reasons = {}
        self._compute()

    def _compute(self):
        records = self.records
        succeeded = [r for r in records if r.ok]
        self.total = len(records)
        self.succeeded = len(succeeded)
        self.failed = self.total - self.succeeded
        errors = {}
        for record in records:
            if not record.ok:
                errors[record.error or "unfinished"] = errors.get(record.error or "unfinished", 0) + 1
        self.errors = dict(sorted(errors.items()))
        self.error_rate = self.failed / float(self.total) if self.total else None
        if not self.total:
            self.null_reasons["error_rate"] = "no measured request (the stage ended before its warm-up did)"

        self.latency = {}
        for name, function, reason in LATENCY_METRICS:
            values = []
            for record in succeeded:
                value = function(record)
                if value is not None:
                    values.append(value)
            self.latency[name] = distribution(values)
            if self.latency[name] is None:
                self.null_reasons[name] = reason
        pooled = []
        for record in succeeded:
            pooled.extend(record.per_token_gaps())
        self.latency["itl"] = distribution(pooled)
        if self.latency["itl"] is None:
            self.null_reasons["itl"] = "no successful streamed request with two or more content chunks"

        sent = [r for r in records if r.sent is not None]
        self.send_lag = distribution([r.sent - r.scheduled for r in sent])
        if self.send_lag is None:
            self.null_reasons["send_lag"] = "no request was sent"
        self.input_length = distribution([float(r.prompt_tokens) for r in succeeded if r.prompt_tokens is not None])
        self.output_length = distribution([float(r.output_tokens) for r in succeeded])
        self.usage_reported = sum(1 for r in succeeded if r.usage_completion is not None)
        # outputs that ended before max_tokens (the server stopped at its end-of-sequence token)
        known = [r for r in succeeded if r.short_output is not None]
        self.short_output_known = len(known)
        self.short_outputs = sum(1 for r in known if r.short_output)
        self.short_output_share = self.short_outputs / float(len(known)) if known else None
        if not known:
            self.null_reasons["short_output_share"] = "no successful request whose output length is known"
        self.short_output_basis = {}
        for record in known:
            source = record.output_tokens_source
            self.short_output_basis[source] = self.short_output_basis.get(source, 0) + 1

        # the measurement window: first scheduled arrival to the last end
        self.window_start = min((r.scheduled for r in records), default=None)
        ends = [r.end for r in records if r.end is not None]
        self.window_end = max(ends) if ends else None
        self.duration = (self.window_end - self.window_start) if ends and self.window_end > self.window_start else None
        if self.duration:
            self.request_throughput = self.succeeded / self.duration
            self.input_token_throughput = sum(r.prompt_tokens or 0 for r in succeeded) / self.duration
            self.output_token_throughput = sum(r.output_tokens for r in succeeded) / self.duration
            self.total_token_throughput = self.input_token_throughput + self.output_token_throughput
        else:
            self.request_throughput = self.input_token_throughput = None
            self.output_token_throughput = self.total_token_throughput = None
            self.null_reasons["throughput"] = "no request finished after its scheduled time"

        scheduled = sorted(r.scheduled for r in records)
        sent_times = sorted(r.sent for r in sent)
        self.scheduled_rate = _rate(len(scheduled), scheduled[0] if scheduled else None, scheduled[-1] if scheduled else None)
        self.achieved_rate = _rate(len(sent_times), sent_times[0] if sent_times else None, sent_times[-1] if sent_times else None)
        if self.achieved_rate is None:
            self.null_reasons["achieved_rate"] = "fewer than two requests were sent"
        reference = self.requested_rate or self.scheduled_rate
        self.rate_error = (self.achieved_rate / reference - 1.0) if self.achieved_rate and reference else None
        if self.requested_rate is None:
            self.null_reasons["requested_rate"] = "a closed loop has no requested rate (it is paced by completions)"

        reasons = []
        if self.send_lag is not None and self.send_lag["p99"] * 1e3 > self.client_bound_p99_ms:
            reasons.append("send lag p99 %.2f ms > %.2f ms" % (self.send_lag["p99"] * 1e3, self.client_bound_p99_ms))
        # sending the schedule took longer than the schedule (by more than the lag threshold:
        # a short stage's rate is noisy): the client fell behind
        behind_ms = ((sent_times[-1] - sent_times[0]) - (scheduled[-1] - scheduled[0])) * 1e3 if len(sent_times) > 1 else 0.0
        if self.stage.load != "concurrency" and self.achieved_rate and self.scheduled_rate \
                and self.achieved_rate < 0.99 * self.scheduled_rate and behind_ms > self.client_bound_p99_ms:
            reasons.append("sends at %.2f req/s, %.1f%% below the schedule's %.2f req/s"
                           % (self.achieved_rate, 100 * (1 - self.achieved_rate / self.scheduled_rate), self.scheduled_rate))
        self.client_bound = bool(reasons)
        self.client_bound_reasons = reasons

    # -- time series (one point per second of the window)

    def time_series(self):
        if self.duration is None or self.origin is None:
            return None
        start = self.window_start
        seconds = int(math.ceil(self.duration))
        if seconds > 86400:
            return None
        completions = [0] * seconds
        tokens = [0.0] * seconds
        ttfts = [[] for _second in range(seconds)]
        for record in self.records:
            if not record.ok:
                continue
            completions[min(seconds - 1, int(record.end - start))] += 1
            if record.token_times:
                per_chunk = record.output_tokens / float(len(record.token_times))
                for moment in record.token_times:
                    tokens[min(seconds - 1, max(0, int(moment - start)))] += per_chunk
                ttfts[min(seconds - 1, max(0, int(record.scheduled - start)))].append(record.token_times[0] - record.scheduled)
            else:
                tokens[min(seconds - 1, int(record.end - start))] += record.output_tokens
        return {"start_wall": self.started_wall, "completions": completions, "output_tokens": tokens, "ttfts": ttfts}

    def headline(self):
        """Flat numbers in milliseconds and per second (the harness's ``@result``)."""
        result = {}
        for name in ("ttft", "ttft_from_send", "tpot", "itl", "itl_per_request", "ntpot", "e2e", "e2e_from_send"):
            stats = self.latency.get(name)
            for key in ("mean", "p50", "p90", "p95", "p99", "max"):
                result["%s_%s_ms" % (name, key)] = None if stats is None else stats[key] * 1e3
        lag = self.send_lag
        for key in ("mean", "p50", "p99", "p99p9", "max"):
            result["send_lag_%s_ms" % key] = None if lag is None else lag[key] * 1e3
        result.update(
            total_requests=self.total, completed_requests=self.succeeded, failed_requests=self.failed,
            warmup_requests_excluded=self.warmup_count, error_rate=self.error_rate, errors_by_class=self.errors,
            requested_rate=self.requested_rate, scheduled_rate=self.scheduled_rate, achieved_rate=self.achieved_rate,
            rate_error=self.rate_error, request_throughput=self.request_throughput,
            input_token_throughput=self.input_token_throughput, output_token_throughput=self.output_token_throughput,
            total_token_throughput=self.total_token_throughput, measured_duration_s=self.duration,
            output_tokens_mean=None if self.output_length is None else self.output_length["mean"],
            input_tokens_mean=None if self.input_length is None else self.input_length["mean"],
            usage_reported_requests=self.usage_reported, short_outputs=self.short_outputs,
            short_output_share=self.short_output_share,
            short_output_basis=dict(sorted(self.short_output_basis.items())),
            client_bound=self.client_bound, client_bound_reasons=self.client_bound_reasons,
            client_bound_threshold_p99_ms=self.client_bound_p99_ms, client_cpu_utilization=self.cpu_utilization,
        )
        return result

    def summary(self):
        """Per-stage summary (the ``stages`` list of ``@result``): its identity and headline."""
        document = {"stage": self.stage.index, "name": self.stage.label, "load": self.stage.load,
                    "rate": self.stage.rate, "concurrency": self.stage.concurrency, "origin": self.stage.origin}
        document.update(self.headline())
        document["stopped"] = self.stopped
        document["null_reasons"] = dict(self.null_reasons)
        return document


def finite_or_none(value):
    """JSON-safe numbers: NaN and infinities become None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def sanitize(document, reasons, path=""):
    """Replace non-finite numbers by None (recording why under their path); returns the new document."""
    if isinstance(document, dict):
        return {key: sanitize(value, reasons, "%s.%s" % (path, key) if path else str(key)) for key, value in document.items()}
    if isinstance(document, (list, tuple)):
        return [sanitize(value, reasons, "%s[%d]" % (path, i)) for i, value in enumerate(document)]
    if isinstance(document, float) and not math.isfinite(document):
        reasons[path] = "not a finite number (%r)" % document
        return None
    return document
