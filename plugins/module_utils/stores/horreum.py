# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Horreum, the result repository of Red Hat's performance teams, as an export target.

Each run becomes one Horreum run of the test ``export.horreum.test`` (the reference's ``horreum:
test_name``), through Horreum's upload API (Hyperfoil/Horreum docs/site/content/en/openapi/openapi.yaml,
``POST /api/run/data``: query ``test``, ``owner``, ``access`` (PUBLIC, PROTECTED, PRIVATE), ``start``,
``stop``, ``schema``, ``description``; the JSON body is the run's data; 202 with the new run ids as
text, or 200 with one as JSON). The data is the run's KPI and verdict documents under a ``$schema``
(``export.horreum.schema_uri``); start and stop are the earliest and latest document times.

Idempotent by run id: the description names the run (``perfscale.topsail run <run id>``) and the
test's runs (``GET /api/test/byName/{name}`` then ``GET /api/run/list/{testId}``, page by page) are
looked through first; a run already there is not uploaded again. Authentication: an API key
(``X-Horreum-API-Key``, read from the secrets directory as one value, sent only over https:// or to a
loopback host, masked out of every error: see ``json_http``). Horreum keeps no history the
regression step could read: it is never ``export.backend``, only a second target
(``export.horreum.enabled``) with the same spool and replay as the stores.
"""

from __future__ import annotations

import datetime
import urllib.parse

from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import (
    PerfscaleError,
    StoreConfigError,
    StoreError,
    StoreUnavailable,
)
from ansible_collections.perfscale.topsail.plugins.module_utils.json_http import JsonHttp, NotifyError, Unreachable
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base

DESCRIPTION = "perfscale.topsail run %s"
PAGE_SIZE = 100
MAX_PAGES = 100
ACCESS = ("PUBLIC", "PROTECTED", "PRIVATE")


def _millis(stamp):
    return int(round(base.parse_timestamp(stamp) * 1000))


def _iso(millis):
    return datetime.datetime.fromtimestamp(millis / 1000.0, tz=datetime.timezone.utc).isoformat().replace("+00:00", "Z")


class HorreumStore(base.ResultsStore):
    name = "horreum"
    # an export target: the regression step cannot read a history from it
    keeps_history = False

    def __init__(self, url, test, api_key, owner=None, access="PROTECTED", schema_uri=None, timeout=base.DEFAULT_TIMEOUT):
        self.url = url
        self.test = test
        self.owner = owner
        self.access = access
        self.schema_uri = schema_uri
        try:
            self.http = JsonHttp(url, None, timeout_s=timeout, max_retry_after_s=0,
                                 secret_headers={"X-Horreum-API-Key": api_key}, setting="export.horreum.url",
                                 secret_name="the API key (export.horreum.api_key_file)")
        except NotifyError as exc:
            raise StoreConfigError(str(exc)) from None

    @classmethod
    def settings_model(cls):
        from typing import Literal, Optional

        import pydantic

        class HorreumSettings(pydantic.BaseModel):
            model_config = pydantic.ConfigDict(extra="forbid")
            # also export each run to Horreum (besides export.backend)
            enabled: bool = False
            # http(s)://host[:port] of Horreum's API
            url: Optional[str] = None
            # the Horreum test the runs go to (the reference's horreum.test_name)
            test: Optional[str] = None
            # the owning team's role (e.g. dev-team); None: the uploader's default
            owner: Optional[str] = None
            access: Literal[ACCESS] = "PROTECTED"
            # the $schema of the run's data (Horreum's schema URI, e.g. urn:perfscale-topsail:run:1)
            schema_uri: str = "urn:perfscale-topsail:run:1"
            # a file of the secrets directory holding the API key
            api_key_file: Optional[str] = None

            @pydantic.model_validator(mode="after")
            def _complete_when_enabled(self):
                if self.url is not None and not str(self.url).startswith(("http://", "https://")):
                    raise ValueError("url %r: expected http(s)://host[:port]" % self.url)
                problem = secret_refs.cleartext_problem(self.url, "url", "credentials (the API key)")
                if self.url is not None and self.api_key_file and problem:
                    raise ValueError(problem)
                if self.enabled:
                    missing = [name for name in ("url", "test", "api_key_file") if not getattr(self, name)]
                    if missing:
                        raise ValueError("enabled: true needs %s" % ", ".join(missing))
                return self

        return HorreumSettings

    @classmethod
    def from_settings(cls, export, secrets_config=None, environ=None):
        settings = export["horreum"]
        if not settings.get("url") or not settings.get("test") or not settings.get("api_key_file"):
            raise StoreError("export.horreum: url, test and api_key_file are needed to upload to Horreum")
        try:
            api_key = secret_refs.read_referenced_secret(secrets_config or {}, settings["api_key_file"], environ)
        except PerfscaleError as exc:
            raise StoreError("export.horreum.api_key_file: %s" % exc) from None
        return cls(settings["url"], settings["test"], api_key, settings.get("owner"), settings.get("access", "PROTECTED"),
                   settings.get("schema_uri"), export["timeout_s"])

    def describe(self):
        return "horreum %s (test %s)" % (self.url, self.test)

    def ensure_schema(self, label_fields=()):
        return None

    def _request(self, method, path, body=None, params=None):
        try:
            return self.http.request(method, path, body=body, params=params)
        except Unreachable as exc:
            raise StoreUnavailable(str(exc)) from None
        except NotifyError as exc:
            raise StoreError(str(exc)) from None

    def _uploaded_runs(self):
        """The run ids (ours) of the runs the test already holds."""
        _status, _headers, test = self._request("GET", "/api/test/byName/%s" % urllib.parse.quote(self.test, safe=""))
        if not isinstance(test, dict) or not isinstance(test.get("id"), int) or isinstance(test.get("id"), bool):
            raise StoreError("horreum %s: test %r: expected a test with a whole-number id" % (self.url, self.test))
        found = set()
        for page in range(1, MAX_PAGES + 1):
            _status, _headers, listing = self._request("GET", "/api/run/list/%s" % test["id"],
                                                       params={"limit": PAGE_SIZE, "page": page, "trashed": "false"})
            runs = listing.get("runs") if isinstance(listing, dict) else None
            total = listing.get("total") if isinstance(listing, dict) else None
            if not isinstance(runs, list) or not (total is None or isinstance(total, int) and not isinstance(total, bool)):
                raise StoreError("horreum %s: GET /api/run/list/%s: expected {runs: [...], total: a whole number}"
                                 % (self.url, test["id"]))
            for run in runs:
                # a run that is not an object, or has no text description, is not one of ours
                description = run.get("description") if isinstance(run, dict) else None
                if isinstance(description, str) and description.startswith(DESCRIPTION % ""):
                    found.add(description[len(DESCRIPTION % ""):].strip())
            if len(runs) < PAGE_SIZE or page * PAGE_SIZE >= (total or 0):
                break
        return found

    def run_data(self, run_id, documents):
        return {"$schema": self.schema_uri, "run_id": run_id,
                "kpis": [d for d in documents if d.get("kind") in ("kpi", "prom")],
                "regressions": [d for d in documents if d.get("kind") == "regression"]}

    def write(self, documents):
        result = base.WriteResult()
        by_run = {}
        for document in documents:
            if document.get("kind") == "point":
                # a point's wall time, kept for the capacity estimates of later rehearsals: not Horreum's
                result.delivered.append(document)
                continue
            run_id = document.get("run_id") or document.get("test_uuid")
            if not run_id:
                result.rejected.append((document, "no run_id: a Horreum run is one run of the collection"))
                continue
            by_run.setdefault(str(run_id), []).append(document)
        if not by_run:
            return result
        uploaded = self._uploaded_runs()
        for run_id, run_documents in sorted(by_run.items()):
            if run_id in uploaded:
                result.delivered.extend(run_documents)
                continue
            stamps = [_millis(d["@timestamp"]) for d in run_documents if d.get("@timestamp")]
            if not stamps:
                result.rejected.extend((d, "no @timestamp: Horreum needs the run's start and stop") for d in run_documents)
                continue
            params = {"test": self.test, "access": self.access, "start": _iso(min(stamps)), "stop": _iso(max(stamps)),
                      "schema": self.schema_uri, "description": DESCRIPTION % run_id}
            if self.owner:
                params["owner"] = self.owner
            try:
                self._request("POST", "/api/run/data", body=self.run_data(run_id, run_documents), params=params)
            except StoreUnavailable as exc:
                result.gave_up = str(exc)
                result.rejected.extend((d, str(exc)) for d in run_documents)
                break
            except StoreError as exc:
                result.rejected.extend((d, base.short_reason(exc)) for d in run_documents)
                continue
            result.delivered.extend(run_documents)
        return result

    def history_batch(self, queries, ignore_keys=()):
        raise StoreError("horreum is an export target, not a history store: set export.backend to sqlite or "
                         "opensearch and export.horreum.enabled to upload there too")

    def marks(self):
        return {}

    def documents(self, kind="kpi"):
        raise StoreError("horreum is an export target: read its runs in Horreum")

    def count(self, kind="kpi"):
        raise StoreError("horreum is an export target: its runs are counted in Horreum")
