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

from ansible_collections.perfscale.topsail.plugins.module_utils import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils import config as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils import config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils import stores
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ArtifactError, ExportError, StoreError
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base as stores_base

SPOOL_DIRNAME = "kpi_export_spool"
REPLAYED_DIRNAME = "replayed"
SPOOL_SUFFIX = ".jsonl"
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


def load_bundle_documents(bundle):
    """Documents of an export bundle: ``{"kind": "kpi"|"regression", "file": path}``."""
    path = bundle["file"]
    try:
        with open(path, encoding="utf-8") as handle:
            records = json.load(handle)
    except (OSError, ValueError) as exc:
        raise ExportError("export file %s: cannot be read: %s" % (path, exc)) from None
    if not isinstance(records, list):
        raise ExportError("export file %s: expected a list of records" % path)
    return kpi_documents(records) if bundle.get("kind", "kpi") == "kpi" else records


# --------------------------------------------------------------------------
# spool


def spool_path(spool_dir):
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    return os.path.join(spool_dir, "export-%s-%d%s" % (stamp, os.getpid(), SPOOL_SUFFIX))


def write_spool(path, documents):
    artifacts.write_text_atomic(path, "".join(json.dumps(d, sort_keys=True, default=str) + "\n" for d in documents))
    return path


def read_spool(path):
    """Documents of a spool file; unreadable lines are skipped and counted."""
    documents, bad = [], 0
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                document = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if isinstance(document, dict) and document.get("doc_id"):
                documents.append(document)
            else:
                bad += 1
    return documents, bad


def spool_files(spool_dir):
    if not os.path.isdir(spool_dir):
        return []
    return sorted(os.path.join(spool_dir, name) for name in os.listdir(spool_dir) if name.endswith(SPOOL_SUFFIX))


# --------------------------------------------------------------------------
# delivery


def deliver(documents, export, config=None, label_fields=(), environ=None):
    """Write documents to the configured store: (delivered, undelivered, reason, store description)."""
    if not documents:
        return [], [], None, None
    store = None
    try:
        store = stores.open_store(export, config, environ)
        store.ensure_schema(label_fields)
        result = store.write(documents)
    except StoreError as exc:
        return [], list(documents), str(exc), store.describe() if store else export["backend"]
    finally:
        if store is not None:
            store.close()
    delivered_ids = {d["doc_id"] for d in result.delivered}
    undelivered = [d for d in documents if d["doc_id"] not in delivered_ids]
    reason = "; ".join(sorted({why for _doc, why in result.rejected})[:3]) or None
    return result.delivered, undelivered, reason, store.describe()


def export_documents(documents, export, spool_dir, config=None, label_fields=(), environ=None):
    """Spool, deliver, keep in the spool what was not delivered. Never raises for store problems."""
    outcome = {"documents": len(documents), "delivered": 0, "undelivered": 0, "spool_file": None,
               "reason": None, "store": None, "spool_error": None}
    if not documents:
        return outcome
    path = spool_path(spool_dir)
    try:
        write_spool(path, documents)  # write-ahead: nothing is lost from here on
    except (OSError, ArtifactError) as exc:
        path = None  # still try to deliver; what fails cannot be kept, and that is reported
        outcome["spool_error"] = "spool %s cannot be written: %s" % (spool_dir, exc)
    delivered, undelivered, reason, description = deliver(documents, export, config, label_fields, environ)
    outcome.update(delivered=len(delivered), undelivered=len(undelivered), reason=reason, store=description)
    if path is None:
        if undelivered:
            outcome["reason"] = "; ".join(r for r in (reason, outcome["spool_error"]) if r)
        return outcome
    if undelivered:
        write_spool(path, undelivered)
        outcome["spool_file"] = path
    else:
        os.remove(path)
        if not os.listdir(spool_dir):
            os.rmdir(spool_dir)
    return outcome


def replay_spool(spool_dir, export, config=None, label_fields=(), environ=None):
    """Deliver every spool file of ``spool_dir``; delivered files move to ``replayed/``."""
    if not os.path.isdir(spool_dir):
        raise ExportError("spool_dir %s: not a directory" % spool_dir)
    outcome = {"files": 0, "documents": 0, "delivered": 0, "undelivered": 0, "unreadable_lines": 0,
               "reasons": [], "store": None, "remaining_files": []}
    for path in spool_files(spool_dir):
        documents, bad = read_spool(path)
        outcome["files"] += 1
        outcome["documents"] += len(documents)
        outcome["unreadable_lines"] += bad
        delivered, undelivered, reason, description = deliver(documents, export, config, label_fields, environ)
        outcome["delivered"] += len(delivered)
        outcome["undelivered"] += len(undelivered)
        outcome["store"] = description or outcome["store"]
        if reason and reason not in outcome["reasons"]:
            outcome["reasons"].append(reason)
        if undelivered:
            write_spool(path, undelivered)
            outcome["remaining_files"].append(path)
        else:
            replayed = os.path.join(spool_dir, REPLAYED_DIRNAME)
            os.makedirs(replayed, exist_ok=True)
            shutil.move(path, os.path.join(replayed, os.path.basename(path)))
    return outcome


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
    return config_schema.validate_section({"export": section}, "export", config_schema.export_model()).model_dump()


def make_bundle(kind, path, config, run_root, label_fields=()):
    """What a task hands to the kpi_export callback: the file to export and where to.

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
    }


def export_bundles(bundles, environ=None):
    """Export what the tasks of a play handed over (the play-end export).

    Never raises for store problems: what is not delivered stays in the
    bundle's spool, and a warning says how to replay it. Returns counts, the
    warnings, a message and ``exported`` (the bundle files handled, so that the
    ``kpi_export`` callback does not export them a second time).
    """
    environ = os.environ if environ is None else environ
    outcome = {"kpi": 0, "regression": 0, "delivered": 0, "undelivered": 0, "store": None, "warnings": [],
               "exported": [], "spools": []}
    reasons = []
    for bundle in bundles or []:
        if not isinstance(bundle, dict) or not bundle.get("file"):
            continue
        spool_dir = environ.get("PERFSCALE_EXPORT_SPOOL_DIR") or bundle["spool_dir"]
        try:
            documents = load_bundle_documents(bundle)
        except ExportError as exc:
            outcome["warnings"].append("kpi_export: %s" % exc)
            continue
        result = export_documents(documents, bundle["export"], spool_dir, bundle.get("secrets"),
                                  bundle.get("label_fields") or ())
        outcome["exported"].append(bundle["file"])
        outcome[bundle.get("kind", "kpi")] += result["delivered"]
        outcome["delivered"] += result["delivered"]
        outcome["store"] = result["store"] or outcome["store"]
        if result["undelivered"]:
            outcome["undelivered"] += result["undelivered"]
            if spool_dir not in outcome["spools"]:
                outcome["spools"].append(spool_dir)
            for reason in (result["reason"], result["spool_error"]):
                if reason and reason not in reasons:
                    reasons.append(reason)
    if outcome["undelivered"]:
        outcome["warnings"].append(
            "kpi_export: %d document(s) not delivered to %s (%s); kept in %s; replay with: %s"
            % (outcome["undelivered"], outcome["store"] or "the results store", "; ".join(reasons) or "unknown reason",
               ", ".join(outcome["spools"]), REPLAY_COMMAND % outcome["spools"][0]))
    outcome["message"] = "kpi_export: %d KPI and %d regression document(s) exported to %s" % (
        outcome["kpi"], outcome["regression"], outcome["store"] or "the results store") if outcome["exported"] \
        else "kpi_export: nothing to export"
    return outcome
