# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared results store: OpenSearch, through opensearch-py (imported lazily).

An index per kind (``<prefix>kpis``, ``<prefix>kpis-prom`` for the Prometheus KPIs (the suffix is
``prom_index_suffix``), ``<prefix>regressions``, ``<prefix>marks``) with a mapping
made from the labels (``keyword``), ``value`` (``double``) and ``@timestamp``
(``date``), created before the first write. Bulk writes have a timeout and
bounded retries with back-off. History look-ups of a run go in ``_msearch``
requests (many queries per request); a series longer than a page continues
with ``search_after``, so nothing is truncated at 10,000 hits.

Credentials (``credentials_file``, or a host URL's user-info) go only to https:// or loopback hosts;
every call of the client runs under their ``SecretMask``, so no error carries them.

An answer that is not a list of hits fails the read in one line (the server is broken); a hit whose
document is not an object, or whose fields have other types, is skipped and counted
(``base.ResultsStore.usable``), the others read.
"""

from __future__ import annotations

import math
import time
import urllib.parse

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import (
    StoreConfigError,
    StoreError,
    StoreUnavailable,
)
from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base

# fields OpenSearch indexes with their own type; every other scalar is a keyword label
NATIVE_FIELDS = ("value", "@timestamp", "higher_is_better", "ignored_for_regression")
# fields that stay strings when documents come back (labels are restored to numbers)
TEXT_FIELDS = ("kpi_name", "unit", "test_uuid", "workload", "doc_id", "kind", "@timestamp", "run_id", "git_commit",
               "reason", "by", "artifacts_url")
PAGE_SIZE = 1000
QUERIES_PER_MSEARCH = 100


def read_credentials(secrets_config, credentials_file, environ=None):
    """(username, password) from a YAML file of the secrets directory."""
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import SecretError

    if not credentials_file:
        return None
    try:
        data = secret_refs.read_secret_mapping(secrets_config, credentials_file, environ,
                                               one_value_keys=("username", "password")) or {}
    except SecretError as exc:
        raise StoreConfigError("export.opensearch.credentials_file: %s" % exc) from None
    if not data.get("username") or data.get("password") is None:
        raise StoreConfigError("export.opensearch.credentials_file %s: expected a mapping with username and password"
                               % credentials_file)
    return str(data["username"]), str(data["password"])


def _typed(document):
    """Label values come back as keywords (strings); numbers are restored for comparisons (finite
    ones only: a label "nan" or "Infinity" stays text)."""
    typed = {}
    for key, value in document.items():
        if isinstance(value, str) and key not in TEXT_FIELDS:
            try:
                number = float(value)
            except ValueError:
                number = None
            if number is not None and math.isfinite(number):
                value = int(number) if number.is_integer() and "." not in value and "e" not in value.lower() else number
        typed[key] = value
    return typed


def _hits(response, where):
    """The hits of a search answer, each a mapping (its ``_source`` is checked as a document by the
    reader: a bad one is skipped alone); anything else is one line."""
    section = response.get("hits", {}) if isinstance(response, dict) else None
    hits = section.get("hits", []) if isinstance(section, dict) else None
    if not isinstance(hits, list) or not all(isinstance(hit, dict) for hit in hits):
        raise StoreError("%s: its answer holds no list of hits with their documents" % where)
    if len(hits) == PAGE_SIZE and not isinstance(hits[-1].get("sort"), list):
        raise StoreError("%s: a full page of hits without the sort values of its last hit" % where)
    return hits


class OpenSearchStore(base.ResultsStore):
    name = "opensearch"

    def __init__(self, hosts, index_prefix="perfscale-", verify_certs=True, ca_file=None, credentials=None,
                 timeout=base.DEFAULT_TIMEOUT, max_retries=3, chunk_size=500, backoff=0.5, client=None,
                 prom_index_suffix="-prom"):
        if not hosts:
            raise StoreConfigError("export.opensearch.hosts: expected at least one URL")
        self.hosts = list(hosts)
        mask = secret_refs.SecretMask(basic=[credentials] if credentials else [])
        for host in self.hosts:
            parts = urllib.parse.urlsplit(host if "://" in str(host) else "http://%s" % host)
            if parts.password:
                mask.add_basic(urllib.parse.unquote(parts.username or ""), urllib.parse.unquote(parts.password))
            if credentials or parts.username:
                problem = secret_refs.cleartext_problem(host, "export.opensearch.hosts", "credentials "
                                                        "(export.opensearch.credentials_file, a URL's user-info)")
                if problem:
                    raise StoreConfigError(problem)
        self.index_prefix = index_prefix or ""
        self.prom_index_suffix = prom_index_suffix
        self.timeout = timeout
        self.max_retries = max_retries
        self.chunk_size = chunk_size
        self.backoff = backoff
        if client is None:
            from opensearchpy import OpenSearch

            options = dict(hosts=self.hosts, timeout=timeout, max_retries=0, retry_on_timeout=False,
                           verify_certs=verify_certs)
            if ca_file:
                options["ca_certs"] = ca_file
            if credentials:
                options["http_auth"] = credentials
            client = OpenSearch(**options)
        # every call of the client runs under the mask of the credentials: an error (a server quoting
        # its Authorization header, a connection error naming the URL) keeps its type, not the secrets
        self.client = mask.wrap(client, StoreError)

    @classmethod
    def settings_model(cls):
        from typing import List, Optional

        import pydantic

        class OpenSearchSettings(pydantic.BaseModel):
            model_config = pydantic.ConfigDict(extra="forbid")
            hosts: List[str] = []
            index_prefix: str = "perfscale-"
            # the Prometheus KPIs (kind prom) go to the KPI index's name with this suffix
            prom_index_suffix: str = pydantic.Field(default="-prom", min_length=1)
            verify_certs: bool = True
            ca_file: Optional[str] = None
            credentials_file: Optional[str] = None
            max_retries: int = pydantic.Field(default=3, ge=0)
            chunk_size: int = pydantic.Field(default=500, gt=0)

        return OpenSearchSettings

    @classmethod
    def from_settings(cls, export, secrets_config=None, environ=None):
        settings = export["opensearch"]
        credentials = read_credentials(secrets_config or {}, settings.get("credentials_file"), environ)
        return cls(settings["hosts"], index_prefix=settings["index_prefix"], verify_certs=settings["verify_certs"],
                   ca_file=settings.get("ca_file"), credentials=credentials, timeout=export["timeout_s"],
                   max_retries=settings["max_retries"], chunk_size=settings["chunk_size"],
                   prom_index_suffix=settings.get("prom_index_suffix") or "-prom")

    def describe(self):
        return "opensearch %s" % ", ".join(secret_refs.redact_url(h) for h in self.hosts)

    def _unavailable(self, exc):
        return StoreUnavailable("%s: %s" % (self.describe(), base.short_reason(exc)))

    def _document(self, hit, index):
        """The hit's document, its labels typed back (numbers were indexed as keywords), or None when
        it is skipped (counted)."""
        source = hit.get("_source")
        hit_id = hit.get("_id")
        where = (index, hit_id if isinstance(hit_id, str) else repr(hit_id)[:100] + repr(source)[:200])
        return self.usable(_typed(source) if isinstance(source, dict) else source, where, text=False)

    def index(self, kind):
        names = {"kpi": "kpis", "prom": "kpis" + self.prom_index_suffix, "regression": "regressions", "mark": "marks",
                 "point": "points"}
        return "%s%s" % (self.index_prefix, names[kind])

    @staticmethod
    def mapping(label_fields=()):
        """Labels as keyword, values as double, @timestamp as date."""
        properties = {
            "@timestamp": {"type": "date"},
            "value": {"type": "double"},
            "kpi_name": {"type": "keyword"}, "unit": {"type": "keyword"}, "test_uuid": {"type": "keyword"},
            "workload": {"type": "keyword"}, "doc_id": {"type": "keyword"}, "kind": {"type": "keyword"},
            "higher_is_better": {"type": "boolean"}, "ignored_for_regression": {"type": "boolean"},
        }
        for field in label_fields:
            properties.setdefault(field, {"type": "keyword"})
        return {"dynamic_templates": [{"labels_as_keywords": {"match_mapping_type": "*", "mapping": {"type": "keyword"}}}],
                "properties": properties}

    def _errors(self):
        from opensearchpy import exceptions

        return (exceptions.ConnectionError, exceptions.ConnectionTimeout, exceptions.TransportError)

    def ensure_schema(self, label_fields=()):
        from opensearchpy import exceptions

        for kind in base.KINDS:
            index = self.index(kind)
            try:
                if not self.client.indices.exists(index=index, request_timeout=self.timeout):
                    self.client.indices.create(index=index, body={"mappings": self.mapping(label_fields)},
                                               request_timeout=self.timeout)
                else:
                    self.client.indices.put_mapping(index=index, body={"properties": self.mapping(label_fields)["properties"]},
                                                    request_timeout=self.timeout)
            except exceptions.RequestError as exc:
                if "already_exists" not in str(exc) and "resource_already_exists" not in str(exc):
                    raise StoreError("opensearch index %s: %s" % (index, exc.error)) from None
            except self._errors() as exc:
                raise self._unavailable(exc) from None

    @staticmethod
    def _source(document):
        """The document as indexed: numeric labels become strings (labels are keywords)."""
        def indexed(key, value):
            if key in NATIVE_FIELDS or value is None or isinstance(value, (str, bool, dict, list)):
                return value
            return str(value)
        return {k: indexed(k, v) for k, v in document.items()}

    def write(self, documents):
        """Bulk-write in chunks. After the first chunk whose retries are exhausted, the
        store is taken as gone: the remaining chunks are not sent (``gave_up``), so the
        time a dying store costs is one chunk's retries, not one per chunk."""
        result = base.WriteResult()
        pending = list(documents)
        for start in range(0, len(pending), self.chunk_size):
            if result.gave_up is not None:
                result.rejected.extend((d, "not sent: %s" % result.gave_up) for d in pending[start:])
                break
            self._write_chunk(pending[start:start + self.chunk_size], result)
        return result

    def _write_chunk(self, chunk, result):
        attempt = 0
        while chunk:
            body = []
            for document in chunk:
                body.append({"index": {"_index": self.index(document.get("kind", "kpi")), "_id": document["doc_id"]}})
                body.append(self._source(document))
            try:
                response = self.client.bulk(body=body, request_timeout=self.timeout, refresh="wait_for")
            except self._errors() as exc:
                attempt += 1
                if attempt > self.max_retries:
                    if not result.delivered:
                        raise self._unavailable(exc) from None
                    result.gave_up = "%s stopped answering after %d tries: %s" % (
                        self.describe(), attempt, base.short_reason(exc))
                    result.rejected.extend((d, "unreachable: %s" % base.short_reason(exc)) for d in chunk)
                    return
                time.sleep(self.backoff * (2 ** (attempt - 1)))
                continue
            retry = []
            for document, item in zip(chunk, response.get("items", [])):
                outcome = next(iter(item.values()))
                status = outcome.get("status", 500)
                if 200 <= status < 300:
                    result.delivered.append(document)
                elif status == 429 or status >= 500:
                    retry.append(document)
                else:
                    error = outcome.get("error") or {}
                    reason = error.get("reason", error) if isinstance(error, dict) else error
                    result.rejected.append((document, "rejected (%s): %s" % (status, reason)))
            if not retry:
                return
            attempt += 1
            if attempt > self.max_retries:
                result.rejected.extend((d, "still failing after %d retries" % self.max_retries) for d in retry)
                if len(retry) == len(chunk):
                    # no document of the chunk got through: the store is not taking any
                    result.gave_up = "%s refused a whole chunk %d times (429/5xx)" % (self.describe(), attempt)
                return
            time.sleep(self.backoff * (2 ** (attempt - 1)))
            chunk = retry

    def _query(self, query, ignore_keys):
        filters = [{"term": {"kind": query.kind}}, {"term": {"kpi_name": query.kpi_name}}]
        if query.workload is not None:
            filters.append({"term": {"workload": query.workload}})
        must_not = []
        for key, value in sorted(base.history_filter(query.labels, ignore_keys).items()):
            if value is None:
                must_not.append({"exists": {"field": key}})
            else:
                filters.append({"term": {key: value if isinstance(value, (str, bool)) else str(value)}})
        if query.exclude_test_uuid:
            must_not.append({"term": {"test_uuid": query.exclude_test_uuid}})
        return {"bool": {"filter": filters, "must_not": must_not}}

    def _page(self, kind, query, after=None):
        body = {"query": query, "size": PAGE_SIZE, "sort": [{"@timestamp": "asc"}, {"doc_id": "asc"}]}
        if after is not None:
            body["search_after"] = after
        return {"index": self.index(kind)}, body

    def history_batch(self, queries, ignore_keys=()):
        queries = list(queries)
        answers = [[] for _query in queries]
        # (position, kind, query body, search_after) still to fetch
        pending = [(i, q.kind, self._query(q, ignore_keys), None) for i, q in enumerate(queries)]
        while pending:
            batch, pending = pending[:QUERIES_PER_MSEARCH], pending[QUERIES_PER_MSEARCH:]
            body = []
            for _position, kind, query, after in batch:
                body.extend(self._page(kind, query, after))
            try:
                response = self.client.msearch(body=body, request_timeout=self.timeout)
            except self._errors() as exc:
                raise self._unavailable(exc) from None
            outcomes = response.get("responses") if isinstance(response, dict) else None
            if not isinstance(outcomes, list) or len(outcomes) != len(batch) \
                    or not all(isinstance(outcome, dict) for outcome in outcomes):
                raise StoreError("%s: history query failed: the answer holds no response per query" % self.describe())
            for (position, kind, query, _after), outcome in zip(batch, outcomes):
                if "error" in outcome:
                    error = outcome["error"]
                    reason = error.get("type", error) if isinstance(error, dict) else error
                    if reason == "index_not_found_exception" or outcome.get("status") == 404:
                        continue  # nothing stored yet
                    raise StoreError("%s: history query failed: %s" % (self.describe(), base.short_reason(reason)))
                hits = _hits(outcome, "%s: history query" % self.describe())
                documents = (self._document(hit, self.index(kind)) for hit in hits)
                answers[position].extend(document for document in documents if document is not None)
                if len(hits) == PAGE_SIZE:
                    pending.append((position, kind, query, hits[-1]["sort"]))
        return answers

    def documents(self, kind="kpi"):
        after = None
        while True:
            body = {"query": {"match_all": {}}, "size": PAGE_SIZE, "sort": [{"doc_id": "asc"}]}
            if after is not None:
                body["search_after"] = after
            try:
                response = self.client.search(index=self.index(kind), body=body, request_timeout=self.timeout)
            except self._errors() as exc:
                if getattr(exc, "status_code", None) == 404:
                    return
                raise self._unavailable(exc) from None
            hits = _hits(response, "%s: %s documents" % (self.describe(), kind))
            for hit in hits:
                document = self._document(hit, self.index(kind))
                if document is not None:
                    yield document
            if len(hits) < PAGE_SIZE:
                return
            after = hits[-1]["sort"]

    def marks(self):
        return {mark["run_id"]: mark for mark in self.documents("mark")
                if isinstance(mark.get("run_id"), str) and mark["run_id"]}

    def count(self, kind="kpi"):
        try:
            self.client.indices.refresh(index=self.index(kind), request_timeout=self.timeout)
            return self.client.count(index=self.index(kind), request_timeout=self.timeout)["count"]
        except self._errors() as exc:
            raise self._unavailable(exc) from None

    def close(self):
        self.client.close()
