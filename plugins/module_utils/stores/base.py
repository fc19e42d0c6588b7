# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every results-store backend offers, and the document helpers they share.

A store keeps KPI records (``kind: kpi``, one per test and KPI: the labels
flattened in, ``value``, ``unit``, ``@timestamp``...), the KPIs of the Prometheus
metrics captured during a test (``kind: prom``, the same fields, one per test,
KPI and series: ``prom_query`` and ``prom_series`` are labels), regression
verdicts (``kind: regression``) and marks on runs (``kind: mark``). Document ids are deterministic
(``doc_id``), so a retried or repeated export overwrites, never duplicates.

History look-ups are the hot path of a run (one per analysed KPI): backends
answer them in batches (``history_batch``), one run at a time. The history of
a KPI is the stored documents of the same kind, workload and KPI whose labels
equal the query's labels, except the ``ignore_keys`` (a label whose value is
``None`` matches a document without that label), ordered by time then id.

Reading: a store is data whoever can write to it controls (a shared OpenSearch, a shared SQLite
file). Every document a backend reads back goes through ``read_document``: one that is not a JSON
object, is nested too deep, or whose fields the readers rely on have other types (``FIELD_TYPES``)
is skipped and counted with its reason in the store's ``skipped`` (``SkippedDocuments``), never
failing the read of the others; NaN and infinite numbers are read as null (and counted).

Errors: every backend raises ``StoreUnavailable`` when the store cannot be
reached (nothing written or read), ``StoreConfigError`` for a bad section and
``StoreError`` for anything else the store refuses, each with a one-line
message that never contains credentials.
"""

from __future__ import annotations

import collections
import datetime
import hashlib
import json
import math

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.config.secrets import redact_url

KINDS = ("kpi", "prom", "regression", "mark", "point")
# fields of a record that are not labels (history never compares them)
# artifacts_url (where the run's files were uploaded) differs per run: a record field, never a label;
# so do a run's noise measures (repetition_spread, host_load_per_cpu: the verdicts' uncertainty)
RECORD_FIELDS = ("kpi_name", "value", "unit", "higher_is_better", "ignored_for_regression", "test_uuid",
                 "@timestamp", "workload", "doc_id", "kind", "noisy", "noise", "repetition_spread", "host_load_per_cpu",
                 "view_of", "error", "artifacts_url")
DEFAULT_TIMEOUT = 10.0

# the fields the readers of a store rely on (history, baselines, verdicts, the dashboard) and the
# types a stored document must give them (or null); a document with another type is skipped
TEXT, NUMBER, FLAG, TIME = "text", "a number", "a boolean", "a time (text or a number)"
FIELD_TYPES = dict(
    [(field, TEXT) for field in ("kind", "doc_id", "workload", "kpi_name", "test_uuid", "run_id", "unit",
                                 "artifacts_url", "git_commit", "view_of", "verdict")]
    + [(field, NUMBER) for field in ("value", "error", "repetition_spread", "host_load_per_cpu")]
    + [(field, FLAG) for field in ("higher_is_better", "ignored_for_regression", "noisy", "forgotten")]
    + [("@timestamp", TIME)])
# reasons shown in one line (the others counted as "other reasons")
SHOWN_REASONS = 5


def doc_id(*parts):
    """Deterministic id of a document: a retry or a re-export overwrites, never duplicates."""
    return hashlib.sha256("\0".join(str(p) for p in parts).encode()).hexdigest()[:40]


def kpi_document(record):
    """A flat KPI record (labels + KPI fields) as a store document."""
    document = dict(record)
    document["kind"] = "kpi"
    document["doc_id"] = doc_id("kpi", record["test_uuid"], record["kpi_name"])
    return document


def prom_document(record):
    """A flat record of the ``prom`` workload (a KPI of one Prometheus series) as a store document."""
    document = dict(record)
    document["kind"] = "prom"
    document["doc_id"] = doc_id("prom", record["test_uuid"], record["kpi_name"], record.get("prom_series", ""))
    return document


def point_document(record):
    """A finished matrix point's record (``capacity/estimate.point_record``) as a store document."""
    document = dict(record)
    document["kind"] = "point"
    document["doc_id"] = doc_id("point", record["test_uuid"])
    return document


def mark_document(run_id, forgotten, reason="", by=""):
    """A mark on a run: ``forgotten`` runs are kept out of baselines (nothing is deleted;
    marking again with ``forgotten=False`` brings the run back)."""
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat()
    return {"kind": "mark", "doc_id": doc_id("mark", run_id), "run_id": run_id, "forgotten": bool(forgotten),
            "reason": reason, "by": by, "@timestamp": stamp}


def parse_timestamp(value):
    """Seconds since the epoch of an ISO-8601 timestamp (naive means UTC)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    stamp = datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=datetime.timezone.utc)
    return stamp.timestamp()


def label_part(document):
    """The labels of a document: every field that is not a record field."""
    return {k: v for k, v in document.items() if k not in RECORD_FIELDS and not k.startswith("_")}


def history_filter(labels, ignore_keys):
    """The labels history must match: all of them except the ignored keys."""
    ignore = set(ignore_keys or ())
    return {k: v for k, v in labels.items() if k not in ignore}


def canonical_value(value):
    # 256 and 256.0 are the same label value (JSON and OpenSearch do not keep the difference)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def history_key(kind, workload, kpi_name, labels, ignore_keys):
    """One string per history series: kind, workload, KPI and the compared labels
    (``None`` values left out, so a missing label and a ``None`` label match)."""
    compared = {k: canonical_value(v) for k, v in history_filter(labels, ignore_keys).items() if v is not None}
    text = json.dumps([kind, workload, kpi_name, compared], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def ignore_signature(ignore_keys):
    """Identity of a set of ignored keys (a store may index history per signature)."""
    return hashlib.sha256(json.dumps(sorted(set(ignore_keys or ()))).encode()).hexdigest()[:16]


def json_type(value):
    """What a JSON value is, in the words of a refusal."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "a %s" % type(value).__name__


# the Python types of each expected type (a boolean is an int to Python, never a number here)
_TYPES = {TEXT: (str,), NUMBER: (int, float), FLAG: (bool,), TIME: (str, int, float)}


def _has_type(value, expected):
    return value is None or (isinstance(value, _TYPES[expected]) and (expected == FLAG or value.__class__ is not bool))


_PLAIN = frozenset((str, int, bool, type(None)))


def _scan(document):
    """How many NaN or infinite numbers an object holds, or None when it nests deeper than
    ``bounded_input.MAX_DEPTH`` (the same limit as ``check_tree``); iterative, one pass, and a flat
    document (the usual one: labels and KPI fields) costs one loop over its values."""
    found, nested = 0, []
    for value in document.values():
        kind = value.__class__
        if kind in _PLAIN:
            continue
        if isinstance(value, float):
            found += not math.isfinite(value)
        elif isinstance(value, (dict, list, tuple)):
            nested.append((value, 1))
    while nested:
        item, depth = nested.pop()
        if depth >= bounded_input.MAX_DEPTH:
            return None
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, float):
                found += not math.isfinite(child)
            elif isinstance(child, (dict, list, tuple)):
                nested.append((child, depth + 1))
    return found


ReadDocument = collections.namedtuple("ReadDocument", "document reason nulled workload")
DEEP = "nested deeper than %d levels" % bounded_input.MAX_DEPTH


def read_object(raw, text=True):
    """``(value, non-finite numbers, reason)`` of JSON text (``text``) or an already parsed value:
    ``reason`` None for a JSON object within the bounds of ``bounded_input`` (size, depth; NaN and
    infinity allowed, and counted), else why not (``value``: what was parsed, if anything)."""
    if text and isinstance(raw, (str, bytes, bytearray)):
        if len(raw) > bounded_input.MAX_DOCUMENT_BYTES:
            return None, 0, "larger than %d bytes" % bounded_input.MAX_DOCUMENT_BYTES
        try:
            raw = json.loads(raw)
        except RecursionError:
            return None, 0, DEEP
        except ValueError:   # malformed JSON, and bytes that are not UTF-8
            return None, 0, "not JSON"
    if not isinstance(raw, dict):
        return raw, 0, "not a JSON object (%s)" % json_type(raw)
    found = _scan(raw)
    return raw, found or 0, DEEP if found is None else None


def read_document(raw, text=True):
    """A stored document as read back (``raw``: JSON text, or with ``text`` false an already parsed
    value), never raising: ``document`` with every NaN or infinite number read as null (``nulled``: how
    many there were), or None and the ``reason`` no reader may use it; ``workload``: the one it names as
    text, or None."""
    raw, nulled, reason = read_object(raw, text)
    workload = raw.get("workload") if isinstance(raw, dict) and isinstance(raw.get("workload"), str) else None
    if reason is not None:
        return ReadDocument(None, reason, 0, workload)
    for field, expected in FIELD_TYPES.items():
        value = raw.get(field)
        if value is not None and not _has_type(value, expected):
            return ReadDocument(None, "field %s is %s, expected %s" % (field, json_type(value), expected), 0,
                                workload)
    if nulled:
        raw = json.loads(json.dumps(raw, default=str), parse_constant=lambda _constant: None)
    return ReadDocument(raw, None, nulled, workload)


class SkippedDocuments:
    """The stored documents a store's readers skipped (each once, by where it was read: a retried or
    repeated read does not count it twice) and why, and those whose NaN or infinite numbers were read
    as null. ``workload``: the one the document names, when it names one as text."""

    def __init__(self):
        self._skipped = {}   # where -> (reason, workload)
        self._nulled = {}    # where -> (count, workload)

    def skip(self, where, reason, workload=None):
        self._skipped.setdefault(where, (reason, workload))

    def null(self, where, count, workload=None):
        self._nulled.setdefault(where, (count, workload))

    @staticmethod
    def _of(entries, workload):
        return [value for value, named in entries.values() if workload is None or named == workload]

    def count(self, workload=None):
        return len(self._of(self._skipped, workload))

    def reasons(self, workload=None):
        """``Counter`` {reason: documents} (of one workload's documents, or of every one)."""
        return collections.Counter(self._of(self._skipped, workload))

    def nulled(self, workload=None):
        """How many documents held NaN or infinite numbers (read as null)."""
        return len(self._of(self._nulled, workload))

    def words(self, workload=None):
        """One line: ``3 stored document(s) skipped: 2 not JSON, 1 field kpi_name is a number, expected text``
        and the documents with numbers read as null; "" when there is nothing to say."""
        parts = []
        reasons = self.reasons(workload)
        if reasons:
            ranked = sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
            shown = ", ".join("%d %s" % (count, reason) for reason, count in ranked[:SHOWN_REASONS])
            rest = sum(count for _reason, count in ranked[SHOWN_REASONS:])
            parts.append("%d stored document(s) skipped: %s%s" % (
                sum(reasons.values()), shown, ", %d for other reasons" % rest if rest else ""))
        nulled = self.nulled(workload)
        if nulled:
            parts.append("%d stored document(s) held NaN or infinite numbers, read as null" % nulled)
        return "; ".join(parts)


class HistoryQuery:
    """One history look-up: the series of ``kpi_name`` for these labels."""

    __slots__ = ("workload", "kpi_name", "labels", "exclude_test_uuid", "kind")

    def __init__(self, workload, kpi_name, labels, exclude_test_uuid=None, kind="kpi"):
        self.workload = workload
        self.kpi_name = kpi_name
        self.labels = labels
        self.exclude_test_uuid = exclude_test_uuid
        self.kind = kind

    def key(self, ignore_keys):
        return history_key(self.kind, self.workload, self.kpi_name, self.labels, ignore_keys)


class WriteResult:
    def __init__(self):
        self.delivered = []
        self.rejected = []  # (document, reason)
        # why the backend stopped trying (the store stopped answering): the rest was not sent
        self.gave_up = None

    def as_dict(self):
        return {"delivered": len(self.delivered), "rejected": len(self.rejected),
                "reasons": sorted({reason for _doc, reason in self.rejected})[:5]}


class ResultsStore:
    """Interface of the backends (see the module docstring for the semantics).

    A backend class also provides ``name`` (its ``export.backend`` value),
    ``settings_model()`` (the pydantic model of its ``export.<name>`` section)
    and ``from_settings(export, secrets_config, environ)``.
    """

    name = "store"

    @property
    def skipped(self):
        """The documents this store's readers skipped (``SkippedDocuments``), kept per store object."""
        if "_skipped_documents" not in self.__dict__:
            self.__dict__["_skipped_documents"] = SkippedDocuments()
        return self.__dict__["_skipped_documents"]

    def usable(self, raw, where, text=True):
        """``read_document(raw, text)``, the skipped or nulled document counted under ``where`` (a key
        that names it in the store: its table or index and id); the document, or None when skipped."""
        read = read_document(raw, text)
        if read.reason is not None:
            self.skipped.skip(where, read.reason, read.workload)
        elif read.nulled:
            self.skipped.null(where, read.nulled, read.workload)
        return read.document

    @classmethod
    def settings_model(cls):
        raise NotImplementedError

    @classmethod
    def from_settings(cls, export, secrets_config=None, environ=None):
        raise NotImplementedError

    def ensure_schema(self, label_fields=()):
        raise NotImplementedError

    def write(self, documents):
        """Write documents; returns a ``WriteResult`` (what was delivered, what was rejected and why)."""
        raise NotImplementedError

    def history_batch(self, queries, ignore_keys=()):
        """For each ``HistoryQuery``, its history (a list of documents, oldest first), in query order."""
        raise NotImplementedError

    def history(self, workload, kpi_name, labels, ignore_keys=(), exclude_test_uuid=None, kind="kpi"):
        """The history of one KPI (a batch of one)."""
        return self.history_batch([HistoryQuery(workload, kpi_name, labels, exclude_test_uuid, kind)], ignore_keys)[0]

    def marks(self):
        """{run_id: mark document} of every marked run (see ``mark_document``)."""
        raise NotImplementedError

    def documents(self, kind="kpi"):
        """Every stored document of ``kind``, page by page (an iterator: a long-term view reads the whole
        history without holding the store's answer in memory at once); the order is the store's."""
        raise NotImplementedError

    def count(self, kind="kpi"):
        raise NotImplementedError

    def close(self):
        pass

    def describe(self):
        return self.name


def short_reason(exc):
    """One line of at most 200 characters from an exception, URL user-info redacted."""
    return redact_url(" ".join(str(exc).split()))[:200]
