# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Export KPI and regression documents to the results store; nothing is ever lost.

Documents are first written to a spool file (``<run root>/kpi_export_spool/``),
then delivered; the spool file is removed once everything was delivered, and
rewritten with what was not otherwise. So a store that is down, slow, rejects
a document, or a process killed in the middle of an export leaves the
undelivered documents on disk, and ``replay_spool`` (``playbooks/export.yml -e
spool_dir=PATH``) delivers them later. Document ids are deterministic, so a
replay after a partial delivery still stores every document exactly once.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil

from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.config import validation
from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
from ansible_collections.perfscale.topsail.plugins.module_utils import stores
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import (
    ArtifactError,
    ExportError,
    StoreError,
    StoreUnavailable,
)
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base as stores_base
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import section as export_section
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import sqlite as sqlite_store

SPOOL_DIRNAME = "kpi_export_spool"
REPLAYED_DIRNAME = "replayed"
SPOOL_SUFFIX = ".jsonl"
SPOOL_HEADER = "perfscale_spool"
REPLAY_LOCK_FILE = ".replay.lock"
REPLAY_TARGETS = ("spool", "config")
REPLAY_COMMAND = "ansible-playbook perfscale.topsail.export -e spool_dir=%s"


def _comma_list(text):
    return [item.strip() for item in text.split(",") if item.strip()]


# environment variables that override the export section, for every reader of it
# (the history look-up of the regression step and the export itself)
ENV_OVERRIDES = (
    ("PERFSCALE_EXPORT_BACKEND", ("backend",), str),
    ("PERFSCALE_EXPORT_SQLITE_PATH", ("sqlite", "path"), str),
    ("PERFSCALE_EXPORT_OPENSEARCH_HOSTS", ("opensearch", "hosts"), _comma_list),
    ("PERFSCALE_EXPORT_TIMEOUT", ("timeout_s",), float),
)


def kpi_documents(records):
    return [stores_base.kpi_document(record) for record in records]


def prom_documents(records):
    return [stores_base.prom_document(record) for record in records]


def point_documents(records):
    return [stores_base.point_document(record) for record in records]


# how the records of a bundle file become documents, per kind (regression files hold documents)
BUNDLE_KINDS = {"kpi": kpi_documents, "prom": prom_documents, "regression": list, "point": point_documents}


def _load_bundle_file(kind, path):
    if kind not in BUNDLE_KINDS:
        raise ExportError("export file %s: kind %r: expected one of %s" % (path, kind, ", ".join(BUNDLE_KINDS)))
    try:
        with open(path, encoding="utf-8") as handle:
            records = json.load(handle)
    except (OSError, ValueError) as exc:
        raise ExportError("export file %s: cannot be read: %s" % (path, exc)) from None
    if not isinstance(records, list):
        raise ExportError("export file %s: expected a list of records" % path)
    return BUNDLE_KINDS[kind](records)


def load_bundle_documents(bundle):
    """Documents of an export bundle: ``{"kind": "kpi"|"prom"|"regression", "file": path}``, and of
    its ``parts`` (more ``{"kind", "file"}`` exported with it, e.g. the Prometheus KPIs)."""
    documents = _load_bundle_file(bundle.get("kind", "kpi"), bundle["file"])
    for part in bundle.get("parts") or ():
        documents.extend(_load_bundle_file(part.get("kind", "kpi"), part["file"]))
    return documents


# --------------------------------------------------------------------------
# spool


def spool_path(spool_dir):
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    return os.path.join(spool_dir, "export-%s-%d%s" % (stamp, os.getpid(), SPOOL_SUFFIX))


def spool_target(export, environ=None):
    """Where a spool's documents were going: the backend and its address, never a
    credential (URLs lose their user-info; a credentials *file name* stays a name)."""
    target = {"backend": export["backend"], "timeout_s": export["timeout_s"]}
    if export["backend"] == "sqlite":
        path = export["sqlite"].get("path") or sqlite_store.default_sqlite_path(environ)
        target["sqlite"] = {"path": os.path.abspath(os.path.expanduser(path))}
    else:
        settings = dict(export[export["backend"]])
        if "hosts" in settings:
            settings["hosts"] = [secret_refs.redact_url(host) for host in settings["hosts"]]
        if settings.get("url"):
            settings["url"] = secret_refs.redact_url(settings["url"])
        target[export["backend"]] = settings
    return target


def same_store(target, export, environ=None):
    """Whether a spool's recorded target is the store ``export`` configures."""
    return target == spool_target(export, environ)


def write_spool(path, documents, target=None, label_fields=()):
    """A spool file: a header line (where the documents were going) then one document per line."""
    header = {SPOOL_HEADER: {"format": 2, "target": target, "label_fields": list(label_fields),
                             "created": datetime.datetime.now(datetime.timezone.utc).isoformat()}}
    artifacts.write_text_atomic(path, json.dumps(header) + "\n" + "".join(
        json.dumps(d, sort_keys=True, default=str) + "\n" for d in documents))
    return path


class SpoolFile:
    """What a spool file holds: its header (None for a spool of an older release),
    its documents, and the count of unreadable lines."""

    def __init__(self, path):
        self.path = path
        self.header = None
        self.documents = []
        self.bad = 0
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                line = line.strip()
                if not line:
                    continue
                try:
                    item = json.loads(line)
                except ValueError:
                    self.bad += 1
                    continue
                if isinstance(item, dict) and SPOOL_HEADER in item and self.header is None:
                    self.header = item[SPOOL_HEADER] if isinstance(item[SPOOL_HEADER], dict) else {}
                elif isinstance(item, dict) and item.get("doc_id"):
                    self.documents.append(item)
                else:
                    self.bad += 1

    @property
    def target(self):
        return (self.header or {}).get("target")

    @property
    def label_fields(self):
        return (self.header or {}).get("label_fields") or ()


def spool_files(spool_dir):
    """The spool files of a directory: regular files of its own, never a link out of it."""
    if not os.path.isdir(spool_dir):
        return []
    found = []
    for name in sorted(os.listdir(spool_dir)):
        path = os.path.join(spool_dir, name)
        if name.endswith(SPOOL_SUFFIX) and os.path.isfile(path) and not os.path.islink(path):
            found.append(path)
    return found


# --------------------------------------------------------------------------
# delivery


class Delivery:
    """What one delivery gave: delivered and undelivered documents, why, to which store."""

    def __init__(self, delivered, undelivered, reason=None, store=None, unreachable=False):
        self.delivered = delivered
        self.undelivered = undelivered
        self.reason = reason
        self.store = store
        self.unreachable = unreachable


def deliver(documents, export, config=None, label_fields=(), environ=None):
    """Write documents to a store; never raises for store problems."""
    if not documents:
        return Delivery([], [])
    store = None
    try:
        store = stores.open_store(export, config, environ)
        store.ensure_schema(label_fields)
        result = store.write(documents)
    except StoreUnavailable as exc:
        return Delivery([], list(documents), str(exc), store.describe() if store else export["backend"], True)
    except StoreError as exc:
        return Delivery([], list(documents), str(exc), store.describe() if store else export["backend"])
    finally:
        if store is not None:
            store.close()
    delivered_ids = {d["doc_id"] for d in result.delivered}
    undelivered = [d for d in documents if d["doc_id"] not in delivered_ids]
    reason = "; ".join(sorted({why for _doc, why in result.rejected})[:3]) or None
    return Delivery(result.delivered, undelivered, reason, store.describe(), unreachable=result.gave_up is not None)


class Exporter:
    """Spool everything first, then deliver: a crash at any point leaves what was
    not delivered on disk. A store found unreachable is not tried again in the
    same export (its remaining documents are spooled at once): the time an
    export takes when the store dies is bounded by one store call's retries."""

    def __init__(self, config=None, environ=None):
        self.config = config
        self.environ = os.environ if environ is None else environ
        self.unreachable = {}   # store identity -> reason

    def spool(self, documents, export, spool_dir, label_fields=()):
        """(path or None, error): the write-ahead spool of ``documents``."""
        path = spool_path(spool_dir)
        try:
            write_spool(path, documents, spool_target(export, self.environ), label_fields)
        except (OSError, ArtifactError) as exc:
            return None, "spool %s cannot be written: %s" % (spool_dir, exc)
        return path, None

    def deliver(self, documents, export, label_fields=(), config=None):
        identity = json.dumps(spool_target(export, self.environ), sort_keys=True)
        if identity in self.unreachable:
            return Delivery([], list(documents), "not sent: %s" % self.unreachable[identity],
                            export["backend"], True)
        delivery = deliver(documents, export, config if config is not None else self.config, label_fields,
                           self.environ)
        if delivery.unreachable:
            self.unreachable[identity] = "%s stopped answering earlier in this export" % delivery.store
        return delivery


def settle_spool(path, delivery):
    """After a delivery: remove the spool file, or keep only what was not delivered."""
    if delivery.undelivered:
        spool = SpoolFile(path)
        write_spool(path, delivery.undelivered, spool.target, spool.label_fields)
        return path
    os.remove(path)
    spool_dir = os.path.dirname(path)
    if not os.listdir(spool_dir):
        os.rmdir(spool_dir)
    return None


def _outcome(documents):
    return {"documents": len(documents), "delivered": 0, "undelivered": 0, "spool_file": None,
            "reason": None, "store": None, "spool_error": None}


def export_documents(documents, export, spool_dir, config=None, label_fields=(), environ=None, exporter=None):
    """Spool, deliver, keep in the spool what was not delivered. Never raises for store problems."""
    outcome = _outcome(documents)
    if not documents:
        return outcome
    exporter = exporter or Exporter(config, environ)
    path, outcome["spool_error"] = exporter.spool(documents, export, spool_dir, label_fields)
    _finish(outcome, path, exporter.deliver(documents, export, label_fields))
    return outcome


def _finish(outcome, path, delivery):
    outcome.update(delivered=len(delivery.delivered), undelivered=len(delivery.undelivered), reason=delivery.reason,
                   store=delivery.store)
    if path is None:
        if delivery.undelivered:
            outcome["reason"] = "; ".join(r for r in (delivery.reason, outcome["spool_error"]) if r)
        return outcome
    outcome["spool_file"] = settle_spool(path, delivery)
    return outcome


def replay_spool(spool_dir, export, config=None, environ=None, target="spool"):
    """Deliver every spool file of ``spool_dir``; delivered files move to ``replayed/``.

    Each file goes to the store it recorded (``target="spool"``; when that is the
    configured store, with the configuration's credentials), or to the configured
    store (``target="config"``). Two replays of one spool at once: the second one
    fails at once, saying so.
    """
    if target not in REPLAY_TARGETS:
        raise ExportError("spool_target %r: expected one of %s" % (target, ", ".join(REPLAY_TARGETS)))
    if not os.path.isdir(spool_dir):
        raise ExportError("spool_dir %s: not a directory" % spool_dir)
    outcome = {"files": 0, "documents": 0, "delivered": 0, "undelivered": 0, "unreadable_lines": 0,
               "reasons": [], "store": None, "stores": [], "remaining_files": []}
    exporter = Exporter(config, environ)
    with artifacts.ExclusiveLock(os.path.join(spool_dir, REPLAY_LOCK_FILE), "spool %s (a replay)" % spool_dir):
        for path in spool_files(spool_dir):
            spool = SpoolFile(path)
            destination = export
            if target == "spool" and spool.target and not same_store(spool.target, export, exporter.environ):
                destination = target_export(spool.target, export)
            outcome["files"] += 1
            outcome["documents"] += len(spool.documents)
            outcome["unreadable_lines"] += spool.bad
            delivery = exporter.deliver(spool.documents, destination, spool.label_fields)
            outcome["delivered"] += len(delivery.delivered)
            outcome["undelivered"] += len(delivery.undelivered)
            outcome["store"] = delivery.store or outcome["store"]
            if delivery.store and delivery.store not in outcome["stores"]:
                outcome["stores"].append(delivery.store)
            if delivery.reason and delivery.reason not in outcome["reasons"]:
                outcome["reasons"].append(delivery.reason)
            if delivery.undelivered:
                write_spool(path, delivery.undelivered, spool.target, spool.label_fields)
                outcome["remaining_files"].append(path)
            else:
                replayed = os.path.join(spool_dir, REPLAYED_DIRNAME)
                os.makedirs(replayed, exist_ok=True)
                shutil.move(path, os.path.join(replayed, os.path.basename(path)))
    return outcome


def target_export(target, export):
    """An export section for a spool's recorded target (the configured one's other settings kept)."""
    import copy

    section = copy.deepcopy(export)
    section["backend"] = target["backend"]
    section["timeout_s"] = target.get("timeout_s", section["timeout_s"])
    backend = target["backend"]
    section[backend] = dict(section.get(backend) or {}, **(target.get(backend) or {}))
    return section


# --------------------------------------------------------------------------
# configuration and bundles


def read_export(config, environ=None):
    """The validated ``export`` section, with the ``PERFSCALE_EXPORT_*`` environment
    overrides applied (and validated): the one place the store is resolved."""
    import copy

    environ = os.environ if environ is None else environ
    section = copy.deepcopy(config_lib.get_dotted(config, "export"))
    for variable, path, convert in ENV_OVERRIDES:
        text = environ.get(variable)
        if not text:
            continue
        try:
            value = convert(text)
        except ValueError:
            raise ExportError("%s=%r: not a valid value for export.%s" % (variable, text, ".".join(path))) from None
        node = section
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return validation.read_with_model({"export": section}, "export", export_section.export_model())


def make_bundle(kind, path, config, run_root, label_fields=(), parts=()):
    """What a task hands to the kpi_export callback: the file to export (and ``parts``, more
    ``{"kind", "file"}`` exported with it) and where to.

    Only references travel: the export section (a credentials *file name*) and the
    name of the secrets directory's environment variable, never a secret.
    """
    return {
        "kind": kind,
        "file": path,
        "export": read_export(config),
        "secrets": {"secrets": dict(config.get("secrets") or {})},
        "spool_dir": os.path.join(run_root, SPOOL_DIRNAME),
        "label_fields": list(label_fields),
        "parts": [dict(part) for part in parts],
    }


def _export_to_horreum(spooled, outcome, exporter):
    """With ``export.horreum.enabled``: every document of the play's bundles, once, to Horreum too
    (one Horreum run per run: its KPIs and verdicts together), spooled like any export."""
    enabled = [(bundle, spool_dir, documents) for bundle, spool_dir, documents, _path, _error in spooled
               if ((bundle["export"].get("horreum") or {}).get("enabled"))]
    if not enabled:
        return
    bundle, spool_dir = enabled[0][0], enabled[0][1]
    documents = [document for _bundle, _dir, items in enabled for document in items]
    target = dict(bundle["export"], backend="horreum")
    result = export_documents(documents, target, spool_dir, bundle.get("secrets"), exporter=exporter)
    outcome["horreum"] = {"delivered": result["delivered"], "undelivered": result["undelivered"],
                          "store": result["store"]}
    if result["undelivered"]:
        outcome["warnings"].append("kpi_export: %d document(s) not uploaded to %s (%s); kept in %s; replay with: %s"
                                   % (result["undelivered"], result["store"] or "horreum", result["reason"] or "unknown",
                                      spool_dir, REPLAY_COMMAND % spool_dir))


def export_bundles(bundles, environ=None):
    """Export what the tasks of a play handed over (the play-end export).

    Every bundle is spooled before any is delivered. Never raises for store
    problems: what is not delivered stays in the bundle's spool, and a warning
    says how to replay it. Returns counts, the warnings, a message and
    ``exported`` (the bundle files handled, so that the ``kpi_export`` callback
    does not export them a second time).
    """
    environ = os.environ if environ is None else environ
    outcome = {"kpi": 0, "prom": 0, "regression": 0, "point": 0, "delivered": 0, "undelivered": 0, "store": None,
               "warnings": [], "exported": [], "spools": []}
    reasons, spooled = [], []
    exporter = Exporter(None, environ)
    for bundle in bundles or []:
        if not isinstance(bundle, dict) or not bundle.get("file"):
            continue
        spool_dir = environ.get("PERFSCALE_EXPORT_SPOOL_DIR") or bundle["spool_dir"]
        try:
            documents = load_bundle_documents(bundle)
        except ExportError as exc:
            outcome["warnings"].append("kpi_export: %s" % exc)
            continue
        path, error = exporter.spool(documents, bundle["export"], spool_dir, bundle.get("label_fields") or ())
        spooled.append((bundle, spool_dir, documents, path, error))
    for bundle, spool_dir, documents, path, error in spooled:
        result = _outcome(documents)
        result["spool_error"] = error
        delivery = exporter.deliver(documents, bundle["export"], bundle.get("label_fields") or (), bundle.get("secrets"))
        _finish(result, path, delivery)
        outcome["exported"].append(bundle["file"])
        undelivered_ids = {d["doc_id"] for d in delivery.undelivered}
        for document in documents:
            if document.get("kind") in ("kpi", "prom", "regression", "point") and document["doc_id"] not in undelivered_ids:
                outcome[document["kind"]] += 1
        outcome["delivered"] += result["delivered"]
        outcome["store"] = result["store"] or outcome["store"]
        if result["undelivered"]:
            outcome["undelivered"] += result["undelivered"]
            if spool_dir not in outcome["spools"]:
                outcome["spools"].append(spool_dir)
            for reason in (result["reason"], result["spool_error"]):
                if reason and reason not in reasons:
                    reasons.append(reason)
    _export_to_horreum(spooled, outcome, exporter)
    if outcome["undelivered"]:
        outcome["warnings"].append(
            "kpi_export: %d document(s) not delivered to %s (%s); kept in %s; replay with: %s"
            % (outcome["undelivered"], outcome["store"] or "the results store", "; ".join(reasons) or "unknown reason",
               ", ".join(outcome["spools"]), REPLAY_COMMAND % outcome["spools"][0]))
    prom = ", %d Prometheus KPI" % outcome["prom"] if outcome["prom"] else ""
    outcome["message"] = "kpi_export: %d KPI%s and %d regression document(s) exported to %s" % (
        outcome["kpi"], prom, outcome["regression"], outcome["store"] or "the results store") if outcome["exported"] \
        else "kpi_export: nothing to export"
    if outcome["point"]:
        outcome["message"] += " (and %d point wall time(s), for later cost estimates)" % outcome["point"]
    if outcome.get("horreum"):
        horreum = outcome["horreum"]
        outcome["message"] += "; %d document(s) uploaded to %s" % (horreum["delivered"], horreum["store"] or "horreum")
    return outcome
