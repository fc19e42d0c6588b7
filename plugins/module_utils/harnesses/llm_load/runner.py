# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run stages on one event loop: the scheduler, the closed loop, the drain, the preflight.

The scheduler walks the stage's arrivals in order; for each one it builds the
request bytes first, then sleeps until the arrival's absolute due time
(``start + offset``) and sends. When it is late it sends at once without moving
the schedule: the lateness is the request's send lag. ``max_in_flight`` caps the
requests outstanding (a guard against running out of file descriptors); waiting
for a slot is send lag too.
"""

from __future__ import annotations

import asyncio
import gc
import json
import select
import selectors
import time

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import api
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import arrivals as arrivals_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import client as client_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import failfast
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import preflight as preflight_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.metrics import RequestRecord


class PreciseEpollSelector(selectors.EpollSelector):
    """epoll with sub-millisecond sleeps.

    ``epoll_wait`` takes whole milliseconds (asyncio rounds a wait up), so a
    request due in 0.3 ms would leave up to 1 ms late. Waiting on the epoll file
    descriptor itself with ``select()`` (microsecond timeouts) and then reading
    the ready events with a zero timeout keeps timers within the kernel's timer
    slack (about 50 us) at the cost of one more system call per idle wait.
    """

    def select(self, timeout=None):
        if timeout is not None and timeout > 0:
            descriptor = self.fileno()
            if descriptor < 1024:            # select() cannot watch higher descriptors
                select.select([descriptor], [], [], timeout)
                timeout = 0
        return super().select(timeout)


def new_event_loop(precise_timers=True):
    """An event loop whose timers are sub-millisecond accurate where epoll exists."""
    if precise_timers and hasattr(selectors, "EpollSelector"):
        return asyncio.SelectorEventLoop(PreciseEpollSelector())
    return asyncio.new_event_loop()


def run_on_new_loop(coroutine, precise_timers=True):
    """``asyncio.run`` with our loop (also on Python 3.8-3.10, which lack ``loop_factory``)."""
    loop = new_event_loop(precise_timers)
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(coroutine)
    finally:
        try:
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


class StartError(RuntimeError):
    """The target cannot be used at all (one line): wrong URL, refused, TLS, 401/404, a refused field."""


STOP_GRACE_S = 2.0          # after a stop, how long requests in flight may still finish before they are cancelled


class Settings:
    """What every stage of a run shares.

    The body of a request is the endpoint's fields, ``stream_options`` (when streaming),
    ``ignore_eos: true`` (``ignore_eos`` auto or true) and the user's ``extra_body`` (which
    wins); ``drop`` removes the fields the harness added on its own when the server refuses them.
    """

    def __init__(self, target, model, endpoint="completions", stream=True, token=None, extra_body=None,
                 request_timeout=600.0, max_in_flight=10000, seed=0, keepalive_idle=4.0, request_id_prefix="",
                 ignore_eos="false", dropped=(), stop_after_failures=0):
        self.target = target
        self.model = model
        self.endpoint = api.ENDPOINTS[endpoint]
        self.stream = stream
        self.token = token
        self.user_extra = dict(extra_body or {})
        self.ignore_eos = preflight_lib.ignore_eos_mode(ignore_eos)
        self.dropped = set()
        self.request_timeout = request_timeout
        self.max_in_flight = max_in_flight
        self.seed = seed
        self.keepalive_idle = keepalive_idle
        self.request_id_prefix = request_id_prefix
        self.stop_after_failures = stop_after_failures
        self.path = api.base_path_join(target.base_path, self.endpoint.path_suffix)
        self.extra_body = {}
        self.include_usage = True
        self.drop(dropped)

    def drop(self, fields):
        """Stop sending ``fields`` (added by the harness on its own) in every request from now on."""
        self.dropped.update(fields)
        extra = {}
        if self.ignore_eos != "false" and "ignore_eos" not in self.dropped:
            extra["ignore_eos"] = True
        extra.update(self.user_extra)
        self.extra_body = extra
        self.include_usage = "stream_options" not in self.dropped

    @property
    def ignore_eos_sent(self):
        return self.extra_body.get("ignore_eos") is True

    def body(self, prompt, max_tokens):
        return self.endpoint.body(self.model, prompt, max_tokens, self.stream, self.extra_body, self.include_usage)

    def field_origins(self, document):
        """Where each top-level field of a request ``document`` comes from (preflight_lib's kinds)."""
        origins = {}
        for field in document:
            if field in self.user_extra:
                origins[field] = preflight_lib.EXTRA_BODY
            elif field == "ignore_eos":
                origins[field] = preflight_lib.IGNORE_EOS
            elif field == "stream_options":
                origins[field] = preflight_lib.HARNESS
            else:
                origins[field] = preflight_lib.REQUEST
        return origins


class StageResult:
    """The records of one stage run by one process, and what the process observed."""

    def __init__(self, stage, records, start, cpu_seconds, wall_seconds, started_wall, max_in_flight):
        self.stage = stage
        self.records = records
        self.start = start
        self.cpu_seconds = cpu_seconds
        self.wall_seconds = wall_seconds
        self.started_wall = started_wall
        self.max_in_flight = max_in_flight

    @property
    def cpu_utilization(self):
        return self.cpu_seconds / self.wall_seconds if self.wall_seconds > 0 else None


class LoadClient:
    """One process's load generator: a pool of connections and the stage loops."""

    def __init__(self, settings, prompts, worker=0, workers=1):
        self.settings = settings
        self.prompts = prompts
        self.worker = worker
        self.workers = workers
        self.encoder = client_lib.RequestEncoder(settings.target, settings.path, settings.token, settings.stream)
        self.pool = client_lib.ConnectionPool(settings.target, settings.endpoint, self._done,
                                              settings.request_timeout, settings.keepalive_idle, settings.stream,
                                              secrets=[settings.token] if settings.token else ())
        self.in_flight = 0
        self.peak_in_flight = 0
        self.streak = failfast.FailureStreak(settings.stop_after_failures)
        self.preflight_answer = None
        self._records = None
        self._drained = None
        self._slot_free = None
        self._closed_loop = None
        self._load_task = None

    @property
    def stop_reason(self):
        """Why the run stopped early (one line), or None."""
        return self.streak.reason

    # -- request plumbing

    def _prepare(self, stage, index, offset, warmup, arrival=None):
        data_in = arrival.input_tokens if arrival is not None else None
        data_out = arrival.output_tokens if arrival is not None else None
        request = self.prompts.request(stage.index, index, data_in, data_out)
        prompt = arrival.prompt if arrival is not None and arrival.prompt else request.prompt
        body = self.settings.body(prompt, request.max_tokens)
        record = RequestRecord(stage.index, index, self.worker, warmup, None, request.input_tokens, request.max_tokens)
        if self.settings.request_id_prefix:
            record.request_id = self.settings.request_id_prefix + record.request_id
        return record, self.encoder.encode(record.request_id, body)

    def _send(self, record, data):
        self.in_flight += 1
        if self.in_flight > self.peak_in_flight:
            self.peak_in_flight = self.in_flight
        self._records.append(record)
        self.pool.launch(record, data)

    def _done(self, record):
        self.in_flight -= 1
        if self.streak.add(record) and self._load_task is not None and not self._load_task.done():
            self._load_task.cancel()     # no more sends: the drain below waits for (or cancels) the rest
        if self._slot_free is not None and not self._slot_free.is_set():
            self._slot_free.set()
        if self._closed_loop is not None:
            self._closed_loop(record)
        if self.in_flight == 0 and self._drained is not None:
            self._drained.set()

    # -- stages

    async def run_stage(self, stage, start_at=None):
        """Run ``stage`` from ``start_at`` (a ``time.monotonic()`` value; now when None)."""
        loop = asyncio.get_running_loop()
        start = start_at if start_at is not None else loop.time() + 0.05
        self._records = []
        self._drained = asyncio.Event()
        self._slot_free = asyncio.Event()
        self.peak_in_flight = 0
        collecting = gc.isenabled()
        if collecting:
            # a full collection walks every live object (the records grow with the stage):
            # tens of milliseconds during which nothing is sent or read. The hot path makes
            # no reference cycles, so collections wait for the end of the stage (and the
            # one collection left happens before the stage starts).
            gc.collect()
            gc.freeze()
            gc.disable()
        delay = start - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        started_wall = time.time() - (loop.time() - start)
        cpu_before = time.process_time()
        try:
            if self.stop_reason is None:
                loop_coroutine = self._open_loop if arrivals_lib.LOAD_MODELS[stage.load].open_loop else self._closed
                self._load_task = loop.create_task(loop_coroutine(stage, start))
                try:
                    await self._load_task
                except asyncio.CancelledError:
                    if self.stop_reason is None or not self._load_task.cancelled():
                        raise
                finally:
                    self._load_task = None
            if self.in_flight:
                self._drained.clear()
                if self.stop_reason is None:
                    await self._drained.wait()
                else:
                    await self._drain_after_stop()
        finally:
            if collecting:
                gc.enable()
                gc.unfreeze()
        self._closed_loop = None
        wall = loop.time() - start
        return StageResult(stage, self._records, start, time.process_time() - cpu_before, wall, started_wall,
                           self.peak_in_flight)

    async def _drain_after_stop(self):
        """The run stopped early: requests in flight get STOP_GRACE_S to finish, then are cancelled."""
        try:
            await asyncio.wait_for(self._drained.wait(), STOP_GRACE_S)
        except asyncio.TimeoutError:
            for record in list(self._records):
                self.pool.cancel(record, "the run stopped early")

    async def _open_loop(self, stage, start):
        loop = asyncio.get_running_loop()
        limit = self.settings.max_in_flight
        for arrival in arrivals_lib.arrivals(stage, self.settings.seed, self.worker, self.workers):
            record, data = self._prepare(stage, arrival.index, arrival.offset, arrival.warmup, arrival)
            due = start + arrival.offset
            record.scheduled = due
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            while self.in_flight >= limit:
                self._slot_free.clear()
                await self._slot_free.wait()
            self._send(record, data)

    async def _closed(self, stage, start):
        loop = asyncio.get_running_loop()
        slots = arrivals_lib.closed_loop_slots(stage.concurrency, self.worker, self.workers)
        horizon = start + stage.warmup + stage.duration if stage.duration else None
        limit = (stage.warmup_requests + stage.max_requests) if stage.max_requests else None
        counter = {"next": 0}
        finished = asyncio.Event()

        def next_index():
            index = self.worker + self.workers * counter["next"]
            counter["next"] += 1
            return index

        def launch(scheduled):
            if self.stop_reason is not None:
                return False
            index = next_index()
            if (limit is not None and index >= limit) or (horizon is not None and scheduled >= horizon):
                return False
            offset = scheduled - start
            record, data = self._prepare(stage, index, offset, arrivals_lib.is_warmup(stage, index, offset))
            record.scheduled = scheduled
            self._send(record, data)
            return True

        def on_completion(record):
            # the slot freed by this completion is due at once: its scheduled time is now
            if not launch(loop.time()) and self.in_flight == 0:
                finished.set()

        self._closed_loop = on_completion
        launched = 0
        for _slot in range(slots):
            if launch(start):
                launched += 1
        if launched == 0 or (self.in_flight == 0):
            return
        await finished.wait()

    # -- start checks

    async def preflight(self, probe=True):
        """Check that the target answers: one short request (max_tokens 1, not counted).

        A refused connection, a TLS failure, or HTTP 401/403/404 is a StartError. A request
        refused with another 4xx (422 from FastAPI servers, 400...) decides before the load
        starts: fields the harness added on its own that the server says it does not accept
        (``ignore_eos`` with ignore_eos auto, ``stream_options``) are dropped from every request
        and the preflight is sent again; a refused field that was asked for (ignore_eos true,
        ``extra_body``), or a refusal for another reason, is a StartError naming it. 408, 429
        and 5xx are returned as a warning: the run goes on. ``self.preflight_answer`` keeps
        what was dropped and what the server said.
        """
        warnings = []
        if not probe:
            return warnings
        while True:     # each round drops fields that are no longer sent: it ends
            record, document = await self._preflight_request()
            where = "%s%s" % (self.settings.target.display().rstrip("/"),
                              "" if record.status is None else " (%s)" % self.settings.path)
            detail = ": %s" % record.error_detail if record.error_detail else ""
            if record.error in ("connect_error", "tls_error", "timeout") \
                    or (record.error == "disconnect" and record.status is None):
                raise StartError("%s: %s: %s"
                                 % (where, record.error.replace("_", " "), record.error_detail or "no answer"))
            if record.status in (401, 403):
                raise StartError("%s: HTTP %d: the server refused the credentials (--token-file)%s"
                                 % (where, record.status, detail))
            if record.status == 404:
                raise StartError("%s: HTTP 404: no such endpoint or model %r (check --url, --endpoint, --model)%s"
                                 % (where, self.settings.model, detail))
            if record.status is not None and 400 <= record.status < 500 and record.status not in (408, 429):
                body = self.pool.last_error_body or b""
                try:
                    fields = preflight_lib.decide(record.status, body, self.settings.field_origins(document),
                                                  self.settings.ignore_eos, where)
                except preflight_lib.PreflightRefused as exc:
                    raise StartError(str(exc)) from None
                self.settings.drop(fields)
                answer = self.preflight_answer or {"dropped": [], "server_said": []}
                answer["dropped"] = sorted(set(answer["dropped"]) | set(fields))
                answer["server_said"].append("HTTP %d: %s" % (record.status, preflight_lib.server_message(body) or "-"))
                self.preflight_answer = answer
                continue
            if record.error:
                warnings.append("preflight request: %s%s" % (record.error, detail))
            return warnings

    async def _preflight_request(self):
        """One request with max_tokens 1, as the run sends them; (its record, the body sent as a mapping)."""
        done = asyncio.get_running_loop().create_future()
        saved = self.pool.on_done
        self.pool.on_done = lambda record: done.done() or done.set_result(record)
        self.pool.error_body_limit = preflight_lib.MAX_BODY
        self.pool.last_error_body = None
        try:
            body = self.settings.body("Hello", 1)
            record = RequestRecord(-1, 0, self.worker, True, asyncio.get_running_loop().time(), 1, 1)
            record.request_id = "preflight"
            self.pool.launch(record, self.encoder.encode(record.request_id, body))
            record = await done
        finally:
            self.pool.on_done = saved
            self.pool.error_body_limit = client_lib.MAX_ERROR_BODY
        return record, json.loads(body)

    async def server_version(self):
        """``{"version": ...}`` of vLLM's ``/version`` when it answers, else None (never fails the run)."""
        done = asyncio.get_running_loop().create_future()
        saved = self.pool.on_done
        self.pool.on_done = lambda record: done.done() or done.set_result(record)
        try:
            record = RequestRecord(-1, 1, self.worker, True, asyncio.get_running_loop().time(), None, None)
            record.request_id = "version"
            base = self.settings.target.base_path.rstrip("/")
            path = api.base_path_join(base[:-3] if base.endswith("/v1") else base, "version")
            self.pool.last_document = None
            self.pool.launch(record, client_lib.get_request_bytes(self.settings.target, path, self.settings.token), stream=False)
            record = await done
            document = self.pool.last_document
            if record.status == 200 and isinstance(document, dict) and isinstance(document.get("version"), str):
                return document["version"]
            return None
        finally:
            self.pool.on_done = saved

    def close(self):
        self.pool.close()
