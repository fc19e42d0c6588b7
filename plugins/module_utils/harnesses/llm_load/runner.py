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
import select
import selectors
import time

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import api
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import arrivals as arrivals_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import client as client_lib
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
    """The target cannot be used at all (one line): wrong URL, refused, TLS, 401/404."""


class Settings:
    """What every stage of a run shares."""

    def __init__(self, target, model, endpoint="completions", stream=True, token=None, extra_body=None,
                 request_timeout=600.0, max_in_flight=10000, seed=0, keepalive_idle=4.0, request_id_prefix=""):
        self.target = target
        self.model = model
        self.endpoint = api.ENDPOINTS[endpoint]
        self.stream = stream
        self.token = token
        self.extra_body = extra_body or {}
        self.request_timeout = request_timeout
        self.max_in_flight = max_in_flight
        self.seed = seed
        self.keepalive_idle = keepalive_idle
        self.request_id_prefix = request_id_prefix
        self.path = api.base_path_join(target.base_path, self.endpoint.path_suffix)


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
        self._records = None
        self._drained = None
        self._slot_free = None
        self._closed_loop = None

    # -- request plumbing

    def _prepare(self, stage, index, offset, warmup, arrival=None):
        data_in = arrival.input_tokens if arrival is not None else None
        data_out = arrival.output_tokens if arrival is not None else None
        request = self.prompts.request(stage.index, index, data_in, data_out)
        prompt = arrival.prompt if arrival is not None and arrival.prompt else request.prompt
        body = self.settings.endpoint.body(self.settings.model, prompt, request.max_tokens, self.settings.stream,
                                           self.settings.extra_body)
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
            if arrivals_lib.LOAD_MODELS[stage.load].open_loop:
                await self._open_loop(stage, start)
            else:
                await self._closed(stage, start)
            if self.in_flight:
                self._drained.clear()
                await self._drained.wait()
        finally:
            if collecting:
                gc.enable()
                gc.unfreeze()
        self._closed_loop = None
        wall = loop.time() - start
        return StageResult(stage, self._records, start, time.process_time() - cpu_before, wall, started_wall,
                           self.peak_in_flight)

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

        A refused connection, a TLS failure, or HTTP 401/403/404 is a StartError;
        other statuses (429, 5xx) are returned as a warning: the run goes on.
        """
        done = asyncio.get_running_loop().create_future()
        saved = self.pool.on_done
        self.pool.on_done = lambda record: done.done() or done.set_result(record)
        warnings = []
        try:
            if probe:
                body = self.settings.endpoint.body(self.settings.model, "Hello", 1, self.settings.stream, self.settings.extra_body)
                record = RequestRecord(-1, 0, self.worker, True, asyncio.get_running_loop().time(), 1, 1)
                record.request_id = "preflight"
                self.pool.launch(record, self.encoder.encode(record.request_id, body))
                record = await done
                where = "%s%s" % (self.settings.target.display().rstrip("/"), "" if record.status is None else " (%s)" % self.settings.path)
                if record.error in ("connect_error", "tls_error", "timeout") or (record.error == "disconnect" and record.status is None):
                    raise StartError("%s: %s: %s" % (where, record.error.replace("_", " "), record.error_detail or "no answer"))
                if record.status in (401, 403):
                    raise StartError("%s: HTTP %d: the server refused the credentials (--token-file)%s"
                                     % (where, record.status, ": %s" % record.error_detail if record.error_detail else ""))
                if record.status == 404:
                    raise StartError("%s: HTTP 404: no such endpoint or model %r (check --url, --endpoint, --model)%s"
                                     % (where, self.settings.model, ": %s" % record.error_detail if record.error_detail else ""))
                if record.error:
                    warnings.append("preflight request: %s%s" % (record.error, ": %s" % record.error_detail if record.error_detail else ""))
        finally:
            self.pool.on_done = saved
        return warnings

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
