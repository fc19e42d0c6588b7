# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The embedded results store: one SQLite file, zero set-up.

WAL mode, a busy timeout and ``BEGIN IMMEDIATE`` transactions: two plays
writing at once both land. History look-ups go through an index of history
keys (``base.history_key``) per set of ignored keys: the first look-up with a
new set builds it once over the stored documents, every later write keeps it
up to date, and a run's look-ups are then a few indexed ``IN`` queries.

The file may be shared, and written by other hands than this collection's: every document read
back goes through ``base.ResultsStore.usable`` (one that is not JSON, not an object or has fields
of other types is skipped and counted, never failing the read).
"""

from __future__ import annotations

import json
import os
import time

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import StoreUnavailable
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base

SCHEMA = """
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
CREATE TABLE IF NOT EXISTS history_signatures (
    signature TEXT PRIMARY KEY,
    ignore_keys TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS history_keys (
    signature TEXT NOT NULL,
    key TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    PRIMARY KEY (signature, key, doc_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS history_keys_doc ON history_keys (doc_id);
"""
# SQLite's default limit of host parameters per statement is 32766; stay well below
IN_CHUNK = 500


def default_sqlite_path(environ=None):
    environ = os.environ if environ is None else environ
    base_dir = environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base_dir, "perfscale-topsail", "results.sqlite")


def _chunks(items, size):
    for start in range(0, len(items), size):
        yield items[start:start + size]


class SQLiteStore(base.ResultsStore):
    name = "sqlite"

    def __init__(self, path=None, timeout=base.DEFAULT_TIMEOUT):
        import sqlite3

        self.path = os.path.abspath(os.path.expanduser(path or default_sqlite_path()))
        self.timeout = timeout
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            self.connection = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
            self.connection.execute("PRAGMA busy_timeout=%d" % int(timeout * 1000))
            self._retry_busy(lambda: self.connection.execute("PRAGMA journal_mode=WAL"))
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable("sqlite store %s: %s" % (self.path, exc)) from None

    @classmethod
    def settings_model(cls):
        from typing import Optional

        import pydantic

        class SQLiteSettings(pydantic.BaseModel):
            model_config = pydantic.ConfigDict(extra="forbid")
            path: Optional[str] = None

        return SQLiteSettings

    @classmethod
    def from_settings(cls, export, secrets_config=None, environ=None):
        return cls(export["sqlite"]["path"], timeout=export["timeout_s"])

    def describe(self):
        return "sqlite %s" % self.path

    def _unavailable(self, exc):
        return StoreUnavailable("sqlite store %s: %s" % (self.path, exc))

    def _retry_busy(self, work):
        """``work()``, again while SQLite answers "database is locked" without waiting (it does
        so where waiting could deadlock: two connections switching a new file to WAL at once),
        until the store's timeout."""
        import sqlite3

        give_up = time.monotonic() + self.timeout
        pause = 0.005
        while True:
            try:
                return work()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() + pause > give_up:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)

    def ensure_schema(self, label_fields=()):
        import sqlite3

        try:
            # in one write transaction taken first (BEGIN IMMEDIATE waits for the lock): schema
            # statements in autocommit read, then upgrade to a write, which in WAL mode fails at
            # once when another process wrote in between
            self.connection.executescript("BEGIN IMMEDIATE;\n" + SCHEMA + "\nCOMMIT;")
        except sqlite3.Error as exc:
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
            raise self._unavailable(exc) from None

    def _transaction(self, work):
        """Run ``work(connection)`` in one BEGIN IMMEDIATE transaction."""
        import sqlite3

        try:
            self.connection.execute("BEGIN IMMEDIATE")
            value = work(self.connection)
            self.connection.execute("COMMIT")
            return value
        except sqlite3.Error as exc:
            try:
                self.connection.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise self._unavailable(exc) from None

    def write(self, documents):
        result = base.WriteResult()
        rows, keys_input = [], []
        for document in documents:
            try:
                labels = base.label_part(document)
                rows.append((document["doc_id"], document.get("kind", "kpi"), document.get("workload"),
                             document.get("kpi_name"), document.get("test_uuid"),
                             base.parse_timestamp(document["@timestamp"]),
                             json.dumps(labels, sort_keys=True, default=str),
                             json.dumps(document, sort_keys=True, default=str)))
                keys_input.append((document["doc_id"], document.get("kind", "kpi"), document.get("workload"),
                                   document.get("kpi_name"), labels))
            except (KeyError, ValueError, TypeError) as exc:
                result.rejected.append((document, "invalid document: %s" % exc))
        if not rows:
            return result

        def work(connection):
            connection.executemany(
                "INSERT OR REPLACE INTO documents (doc_id, kind, workload, kpi_name, test_uuid, ts, labels, document) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            signatures = connection.execute("SELECT signature, ignore_keys FROM history_signatures").fetchall()
            if signatures:
                ids = [row[0] for row in rows]
                for chunk in _chunks(ids, IN_CHUNK):
                    connection.execute("DELETE FROM history_keys WHERE doc_id IN (%s)" % ",".join("?" * len(chunk)),
                                       chunk)
                for signature, ignore_json in signatures:
                    ignore = json.loads(ignore_json)
                    connection.executemany(
                        "INSERT OR REPLACE INTO history_keys (signature, key, doc_id) VALUES (?, ?, ?)",
                        [(signature, base.history_key(kind, workload, kpi, labels, ignore), doc)
                         for doc, kind, workload, kpi, labels in keys_input])

        self._transaction(work)
        rejected = {id(d) for d, _why in result.rejected}
        result.delivered.extend(d for d in documents if id(d) not in rejected)
        return result

    def _ensure_signature(self, ignore_keys):
        """The signature of ``ignore_keys``, its history keys built on first use."""
        signature = base.ignore_signature(ignore_keys)
        known = self.connection.execute("SELECT 1 FROM history_signatures WHERE signature = ?", (signature,)).fetchone()
        if known:
            return signature
        ignore = sorted(set(ignore_keys or ()))

        def build(connection):
            if connection.execute("SELECT 1 FROM history_signatures WHERE signature = ?", (signature,)).fetchone():
                return  # another process built it meanwhile
            cursor = connection.execute("SELECT doc_id, kind, workload, kpi_name, labels FROM documents")
            while True:
                batch = cursor.fetchmany(5000)
                if not batch:
                    break
                connection.executemany(
                    "INSERT OR REPLACE INTO history_keys (signature, key, doc_id) VALUES (?, ?, ?)",
                    [(signature, base.history_key(kind, workload, kpi, labels, ignore), doc)
                     for doc, kind, workload, kpi, labels in self._keyed(batch)])
            connection.execute("INSERT INTO history_signatures (signature, ignore_keys) VALUES (?, ?)",
                               (signature, json.dumps(ignore)))

        self._transaction(build)
        return signature

    def _keyed(self, rows):
        """The rows (doc_id, kind, workload, kpi_name, labels text) whose labels are a JSON object, the
        labels parsed; a row whose labels are not is never in a history (skipped from it, counted)."""
        for doc, kind, workload, kpi, labels in rows:
            parsed, _nulled, reason = base.read_object(labels)
            if reason is None:
                yield doc, kind, workload, kpi, parsed
            else:
                self.skipped.skip(("history_keys", doc), "labels column %s" % reason, workload
                                  if isinstance(workload, str) else None)

    def history_batch(self, queries, ignore_keys=()):
        import sqlite3

        queries = list(queries)
        if not queries:
            return []
        try:
            signature = self._ensure_signature(ignore_keys)
            keys = sorted({query.key(ignore_keys) for query in queries})
            found = {key: [] for key in keys}
            for chunk in _chunks(keys, IN_CHUNK):
                # ordered per series below: one sort of the whole chunk in SQL costs more
                rows = self.connection.execute(
                    "SELECT h.key, d.ts, d.doc_id, d.document FROM history_keys AS h "
                    "JOIN documents AS d ON d.doc_id = h.doc_id "
                    "WHERE h.signature = ? AND h.key IN (%s)" % ",".join("?" * len(chunk)),
                    [signature] + chunk).fetchall()
                for key, ts, doc, document in rows:
                    found[key].append((ts, doc, document))
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from None
        for key, rows in found.items():
            # a time or an id of another type (a file written by other hands) sorts last, never fails
            rows.sort(key=lambda row: (not isinstance(row[0], (int, float)), row[0] if isinstance(
                row[0], (int, float)) else 0, str(row[1])))
            found[key] = [document for document in (self.usable(text, ("documents", doc)) for _ts, doc, text in rows)
                          if document is not None]
        answers = []
        for query in queries:
            documents = found[query.key(ignore_keys)]
            if query.exclude_test_uuid:
                documents = [d for d in documents if d.get("test_uuid") != query.exclude_test_uuid]
            answers.append(documents)
        return answers

    def marks(self):
        import sqlite3

        try:
            rows = self.connection.execute("SELECT doc_id, document FROM documents WHERE kind = 'mark'").fetchall()
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from None
        marks = (self.usable(text, ("documents", doc)) for doc, text in rows)
        return {mark["run_id"]: mark for mark in marks if mark is not None and mark.get("run_id")}

    def documents(self, kind="kpi"):
        import sqlite3

        try:
            if not self.connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'documents'") \
                    .fetchone():
                return  # a store nothing was exported to yet
            cursor = self.connection.execute(
                "SELECT doc_id, document FROM documents WHERE kind = ? ORDER BY ts, doc_id", (kind,))
            while True:
                rows = cursor.fetchmany(1000)
                if not rows:
                    return
                for doc, text in rows:
                    document = self.usable(text, ("documents", doc))
                    if document is not None:
                        yield document
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from None

    def count(self, kind="kpi"):
        import sqlite3

        try:
            return self.connection.execute("SELECT COUNT(*) FROM documents WHERE kind = ?", (kind,)).fetchone()[0]
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from None

    def close(self):
        self.connection.close()
