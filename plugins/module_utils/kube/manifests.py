# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rendered manifests: parse them, validate them strictly, describe them.

What a toolbox role renders goes through ``check_documents`` before anything
is sent to a cluster: each document is validated against its schema (core
kinds from kubernetes-validate, custom resources from the CRDs the collection
ships, or CRDs rendered alongside), unknown keys are errors. A problem is one
line naming the object, the key path and the schema path.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ManifestValidationError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import validation


def load_documents(text, source):
    """The YAML documents of ``text`` (empty ones skipped); a malformed one names ``source``."""
    import yaml

    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = " line %d" % (mark.line + 1) if mark else ""
        raise ManifestValidationError(["%s:%s: not valid YAML (%s)" % (source, where, getattr(exc, "problem", exc))]) \
            from None
    for position, document in enumerate(documents, 1):
        if not isinstance(document, dict):
            raise ManifestValidationError(["%s: document %d is not a mapping (a Kubernetes object)" % (source, position)])
    return documents


def check_documents(documents, validator=None, strict=True):
    """Validate every document (problems of all of them in one error); CRDs among them are
    registered first, so a custom resource rendered with its CRD validates."""
    validator = validator or validation.ManifestValidator()
    for document in documents:
        if document.get("kind") == "CustomResourceDefinition":
            validator.register_crd(document)
    problems = []
    for document in documents:
        problems.extend(validator.validate(document, strict=strict))
    if problems:
        raise ManifestValidationError(problems)
    return documents


def describe(document):
    """``Kind/name`` (and ``-n namespace``) of a manifest, for messages and summaries."""
    metadata = document.get("metadata") or {}
    name = "%s/%s" % (document.get("kind"), metadata.get("name") or metadata.get("generateName", "") + "*")
    return "%s -n %s" % (name, metadata["namespace"]) if metadata.get("namespace") else name
