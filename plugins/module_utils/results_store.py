# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The results store: KPI records and regression results, SQLite or OpenSearch.

One interface (``ResultsStore``), two backends:

* ``SQLiteStore`` (the embedded default): one file, WAL mode, a busy timeout
  and ``BEGIN IMMEDIATE`` transactions, so two plays writing at once both land.
* ``OpenSearchStore`` (opensearch-py): an index per kind with a mapping made
  from the labels (``keyword``), ``value`` (``double``) and ``@timestamp``
  (``date``), created before the first write; bulk writes with a timeout and
  bounded retries with back-off; history pages with ``search_after`` (never
  truncated at 10,000 hits).

Documents have deterministic ids (test uuid + KPI name), so a retried or
repeated export never duplicates. ``write`` returns what was delivered and
what was not (with the reason); it raises ``StoreUnavailable`` when the store
cannot be reached at all.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import time

KINDS = ("kpi", "regression")
RECORD_FIELDS = ("kpi_name", "value", "unit", "higher_is_better", "ignored_for_regression", "test_uuid",
                 "@timestamp", "workload", "doc_id", "kind")
DEFAULT_TIMEOUT = 10.0
# fields OpenSearch indexes with their own type; every other scalar is a keyword label
NATIVE_FIELDS = ("value", "@timestamp", "higher_is_better", "ignored_for_regression")


class StoreError(Exception):
    """A store problem with a one-line message (never contains credentials)."""


class StoreUnavailable(StoreError):
    """The store cannot be reached (nothing was written)."""


class StoreConfigError(StoreError, ValueError):
    """Invalid export configuration."""


def doc_id(*parts):
    """Deterministic id of a document: a retry or a re-export overwrites, never duplicates."""
    return hashlib.sha256("\0".join(str(p) for p in parts).encode()).hexdigest()[:40]


def kpi_document(record):
    """A flat KPI record (labels + kpi fields) as a store document."""
    document = dict(record)
    document["kind"] = "kpi"
    document["doc_id"] = doc_id("kpi", record["test_uuid"], record["kpi_name"])
    return document


def parse_timestamp(value):
    """Seconds since the epoch of an ISO-8601 timestamp (naive means UTC)."""
    if isinstance(value, (int, float)):
        return float(value)
    stamp = datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=datetime.timezone.utc)
    return stamp.timestamp()


def label_part(document):
    return {k: v for k, v in document.items() if k not in RECORD_FIELDS and not k.startswith("_")}


def history_filter(labels, ignore_keys):
    """The labels history must match: all of them except the ignored keys."""
    ignore = set(ignore_keys or ())
    return {k: v for k, v in labels.items() if k not in ignore}


class WriteResult:
    def __init__(self):
        self.delivered = []
        self.rejected = []  # (document, reason)

    def as_dict(self):
        return {"delivered": len(self.delivered), "rejected": len(self.rejected),
                "reasons": sorted({reason for _doc, reason in self.rejected})[:5]}


class ResultsStore:
    """Interface of the backends."""

    name = "store"

    def ensure_schema(self, label_fields=()):
        raise NotImplementedError

    def write(self, documents):
        raise NotImplementedError

    def history(self, workload, kpi_name, labels, ignore_keys=(), exclude_test_uuid=None):
        """Records of ``kpi_name`` whose labels equal ``labels`` except ``ignore_keys``,
        ordered by timestamp (oldest first)."""
        raise NotImplementedError

    def count(self, kind="kpi"):
        raise NotImplementedError

    def close(self):
        pass

    def describe(self):
        return self.name


# --------------------------------------------------------------------------
# SQLite


def default_sqlite_path(environ=None):
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "perfscale-topsail", "results.sqlite")


class SQLiteStore(ResultsStore):
    name = "sqlite"

    def __init__(self, path=None, timeout=DEFAULT_TIMEOUT):
        import sqlite3

        self.path = os.path.abspath(os.path.expanduser(path or default_sqlite_path()))
        self.timeout = timeout
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            self.connection = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
            self.connection.execute("PRAGMA journal_mode=WAL")
            self.connection.execute("PRAGMA busy_timeout=%d" % int(timeout * 1000))
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable("sqlite store %s: %s" % (self.path, exc)) from None

    def describe(self):
        return "sqlite %s" % self.path

    def ensure_schema(self, label_fields=()):
        import sqlite3

        try:
            self.connection.executescript("""
                CREATE TABLE IF NOT EXISTS documents (
                    doc_id TEXT PRIMARY KEY,
                    kind TEXT NOT NULL,
                    workload TEXT,
                    kpi_name TEXT,
                    test_uuid TEXT,
                    ts REAL NOT NULL,
                    labels TEXT NOT NULL,
                    document TEXT NOT NULL
                );
                CREATE INDEX IF NOT EXISTS documents_history ON documents (kind, workload, kpi_name, ts);
            """)
        except sqlite3.Error as exc:
            raise StoreUnavailable("sqlite store %s: %s" % (self.path, exc)) from None

    def write(self, documents):
        import sqlite3

        result = WriteResult()
        rows = []
        for document in documents:
            try:
                rows.append((document["doc_id"], document.get("kind", "kpi"), document.get("workload"),
                             document.get("kpi_name"), document.get("test_uuid"),
                             parse_timestamp(document["@timestamp"]),
                             json.dumps(label_part(document), sort_keys=True, default=str),
                             json.dumps(document, sort_keys=True, default=str)))
            except (KeyError, ValueError, TypeError) as exc:
                result.rejected.append((document, "invalid document: %s" % exc))
        if not rows:
            return result
        try:
            self.connection.execute("BEGIN IMMEDIATE")
            self.connection.executemany(
                "INSERT OR REPLACE INTO documents (doc_id, kind, workload, kpi_name, test_uuid, ts, labels, document) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self.connection.execute("COMMIT")
        except sqlite3.Error as exc:
            try:
                self.connection.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise StoreUnavailable("sqlite store %s: %s" % (self.path, exc)) from None
        result.delivered.extend(d for d in documents if all(d is not r for r, _why in result.rejected))
        return result

    def history(self, workload, kpi_name, labels, ignore_keys=(), exclude_test_uuid=None, kind="kpi"):
        import sqlite3

        wanted = history_filter(labels, ignore_keys)
        sql = ["SELECT document FROM documents WHERE kind = ? AND workload IS ? AND kpi_name IS ?"]
        params = [kind, workload, kpi_name]
        for key, value in sorted(wanted.items()):
            sql.append("AND json_extract(labels, ?) IS ?")
            params.extend(['$."%s"' % key.replace('"', '\\"'), json.loads(json.dumps(value, default=str))])
        if exclude_test_uuid:
            sql.append("AND test_uuid IS NOT ?")
            params.append(exclude_test_uuid)
        sql.append("ORDER BY ts, doc_id")
        try:
            rows = self.connection.execute(" ".join(sql), params).fetchall()
        except sqlite3.Error as exc:
            raise StoreUnavailable("sqlite store %s: %s" % (self.path, exc)) from None
        documents = [json.loads(row[0]) for row in rows]
        # keys absent from a stored record match a None label (SQL NULL IS NULL)
        return documents

    def count(self, kind="kpi"):
        return self.connection.execute("SELECT COUNT(*) FROM documents WHERE kind = ?", (kind,)).fetchone()[0]

    def close(self):
        self.connection.close()


# --------------------------------------------------------------------------
# OpenSearch


def read_credentials(config, credentials_file, environ=None):
    """(username, password) from a YAML/JSON file of the secrets directory."""
    from ansible_collections.perfscale.topsail.plugins.module_utils import secret_refs

    if not credentials_file:
        return None
    try:
        text = secret_refs.read_secret(config, secret_refs.secret_name(credentials_file)
                                       if secret_refs.is_secret_ref(credentials_file) else credentials_file,
                                       environ, strip=False)
    except secret_refs.SecretError as exc:
        raise StoreConfigError("export.opensearch.credentials_file: %s" % exc) from None
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        data = None
    if not isinstance(data, dict) or not data.get("username") or data.get("password") is None:
        raise StoreConfigError("export.opensearch.credentials_file %s: expected a mapping with username and password"
                               % credentials_file)
    return str(data["username"]), str(data["password"])


class OpenSearchStore(ResultsStore):
    name = "opensearch"

    def __init__(self, hosts, index_prefix="perfscale-", verify_certs=True, ca_file=None, credentials=None,
                 timeout=DEFAULT_TIMEOUT, max_retries=3, chunk_size=500, backoff=0.5, client=None):
        if not hosts:
            raise StoreConfigError("export.opensearch.hosts: expected at least one URL")
        self.hosts = list(hosts)
        self.index_prefix = index_prefix or ""
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
        self.client = client

    def describe(self):
        return "opensearch %s" % ", ".join(redact_url(h) for h in self.hosts)

    def index(self, kind):
        return "%s%s" % (self.index_prefix, "kpis" if kind == "kpi" else "regressions")

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

        for kind in KINDS:
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
                raise StoreUnavailable("%s: %s" % (self.describe(), _short(exc))) from None

    @staticmethod
    def _source(document):
        """The document as indexed: numeric labels become strings (labels are keywords)."""
        def indexed(key, value):
            if key in NATIVE_FIELDS or value is None or isinstance(value, (str, bool, dict, list)):
                return value
            return str(value)
        return {k: indexed(k, v) for k, v in document.items()}

    def write(self, documents):
        result = WriteResult()
        pending = list(documents)
        for start in range(0, len(pending), self.chunk_size):
            chunk = pending[start:start + self.chunk_size]
            self._write_chunk(chunk, result)
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
                        raise StoreUnavailable("%s: %s" % (self.describe(), _short(exc))) from None
                    result.rejected.extend((d, "unreachable: %s" % _short(exc)) for d in chunk)
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
                return
            time.sleep(self.backoff * (2 ** (attempt - 1)))
            chunk = retry

    def history(self, workload, kpi_name, labels, ignore_keys=(), exclude_test_uuid=None, kind="kpi", page_size=1000):
        wanted = history_filter(labels, ignore_keys)
        filters = [{"term": {"kind": kind}}, {"term": {"kpi_name": kpi_name}}]
        if workload is not None:
            filters.append({"term": {"workload": workload}})
        must_not = []
        for key, value in sorted(wanted.items()):
            if value is None:
                must_not.append({"exists": {"field": key}})
            else:
                filters.append({"term": {key: value if isinstance(value, (str, bool)) else str(value)}})
        if exclude_test_uuid:
            must_not.append({"term": {"test_uuid": exclude_test_uuid}})
        query = {"bool": {"filter": filters, "must_not": must_not}}
        documents, after = [], None
        while True:
            body = {"query": query, "size": page_size, "sort": [{"@timestamp": "asc"}, {"doc_id": "asc"}]}
            if after is not None:
                body["search_after"] = after
            try:
                response = self.client.search(index=self.index(kind), body=body, request_timeout=self.timeout)
            except self._errors() as exc:
                if getattr(exc, "status_code", None) == 404:
                    return []
                raise StoreUnavailable("%s: %s" % (self.describe(), _short(exc))) from None
            hits = response.get("hits", {}).get("hits", [])
            documents.extend(hit["_source"] for hit in hits)
            if len(hits) < page_size:
                break
            after = hits[-1]["sort"]
        return [_typed(d) for d in documents]

    def count(self, kind="kpi"):
        try:
            self.client.indices.refresh(index=self.index(kind), request_timeout=self.timeout)
            return self.client.count(index=self.index(kind), request_timeout=self.timeout)["count"]
        except self._errors() as exc:
            raise StoreUnavailable("%s: %s" % (self.describe(), _short(exc))) from None

    def close(self):
        self.client.close()


def _typed(document):
    """Label values come back as keywords (strings); numbers are restored for comparisons."""
    typed = {}
    for key, value in document.items():
        if isinstance(value, str) and key not in ("kpi_name", "unit", "test_uuid", "workload", "doc_id", "kind",
                                                  "@timestamp"):
            try:
                number = float(value)
                value = int(number) if number.is_integer() and "." not in value and "e" not in value.lower() else number
            except ValueError:
                pass
        typed[key] = value
    return typed


def redact_url(url):
    """A URL without its user-info (credentials never reach messages)."""
    import re

    return re.sub(r"(?<=//)[^/@\s]*@", "***@", str(url))


def _short(exc):
    text = redact_url(" ".join(str(exc).split()))
    return text[:200]


# --------------------------------------------------------------------------
# configuration


def export_model():
    from typing import List, Optional

    import pydantic

    strict = pydantic.ConfigDict(extra="forbid")

    class SQLite(pydantic.BaseModel):
        model_config = strict
        path: Optional[str] = None

    class OpenSearch(pydantic.BaseModel):
        model_config = strict
        hosts: List[str] = []
        index_prefix: str = "perfscale-"
        verify_certs: bool = True
        ca_file: Optional[str] = None
        credentials_file: Optional[str] = None
        max_retries: int = pydantic.Field(default=3, ge=0)
        chunk_size: int = pydantic.Field(default=500, gt=0)

    class Export(pydantic.BaseModel):
        model_config = strict
        enabled: bool = True
        backend: str = pydantic.Field(default="sqlite", pattern="^(sqlite|opensearch)$")
        timeout_s: float = pydantic.Field(default=DEFAULT_TIMEOUT, gt=0)
        sqlite: SQLite = SQLite()
        opensearch: OpenSearch = OpenSearch()

    return Export


def open_store(export, config=None, environ=None):
    """A store from the ``export`` section (a validated dict)."""
    if export["backend"] == "sqlite":
        return SQLiteStore(export["sqlite"]["path"], timeout=export["timeout_s"])
    settings = export["opensearch"]
    credentials = read_credentials(config or {}, settings.get("credentials_file"), environ)
    return OpenSearchStore(settings["hosts"], index_prefix=settings["index_prefix"],
                           verify_certs=settings["verify_certs"], ca_file=settings.get("ca_file"),
                           credentials=credentials, timeout=export["timeout_s"],
                           max_retries=settings["max_retries"], chunk_size=settings["chunk_size"])
