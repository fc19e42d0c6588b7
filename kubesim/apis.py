"""API definitions kubesim can serve: upstream CRDs and its own minimal ones.

Two sources, both addressed as ``"group/Kind"``:

- the collection's ``schemas/crds/`` (upstream CustomResourceDefinitions reduced
  to their schemas, ``index.json`` maps ``group/Kind`` to a file);
- ``kubesim/crds/*.yaml`` (kinds without an upstream CRD there; see its README).

:func:`install_crds` stores real ``CustomResourceDefinition`` objects (served
once stored, as on a real server); :func:`serve_api` serves a kind the way an
aggregated API server does (OpenShift's openshift-apiserver, OLM's
packageserver): in discovery and OpenAPI, validated, but with no CRD object.
"""

import copy
import functools
import glob
import json
import os

import yaml

from kubesim.errors import ApiError

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)
UPSTREAM_DIR = os.path.join(REPO_ROOT, "schemas", "crds")
OWN_DIR = os.path.join(HERE, "crds")
CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")


@functools.lru_cache(maxsize=None)
def _own_documents():
    documents = {}
    for path in sorted(glob.glob(os.path.join(OWN_DIR, "*.yaml"))):
        with open(path, encoding="utf-8") as handle:
            for doc in yaml.safe_load_all(handle):
                if doc and doc.get("kind") == "CustomResourceDefinition":
                    spec = doc["spec"]
                    documents["%s/%s" % (spec["group"], spec["names"]["kind"])] = doc
    return documents


@functools.lru_cache(maxsize=None)
def _upstream_index():
    path = os.path.join(UPSTREAM_DIR, "index.json")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


@functools.lru_cache(maxsize=None)
def _upstream_document(filename):
    with open(os.path.join(UPSTREAM_DIR, filename), encoding="utf-8") as handle:
        return json.load(handle)


def known_refs():
    """Every ``group/Kind`` kubesim has a definition for."""
    return sorted(set(_upstream_index()) | set(_own_documents()))


def crd_document(ref):
    """The CRD object of ``ref`` (``"group/Kind"``): a fresh copy; upstream first, then kubesim's own."""
    entry = _upstream_index().get(ref)
    if entry is not None:
        doc = _upstream_document(entry["file"])
    else:
        doc = _own_documents().get(ref)
    if doc is None:
        raise KeyError("no CRD known for %s (known: %s)" % (ref, ", ".join(known_refs())))
    doc = copy.deepcopy(doc)
    doc.setdefault("apiVersion", "apiextensions.k8s.io/v1")
    doc.setdefault("kind", "CustomResourceDefinition")
    return doc


def crd_name(ref):
    return crd_document(ref)["metadata"]["name"]


def install_crds(cluster, refs, labels=None, annotations=None):
    """Store the CRDs of ``refs`` (those already present are left alone); returns the names created."""
    resource = cluster.resource_for_key(CRDS)
    created = []
    for ref in refs:
        doc = crd_document(ref)
        meta = doc["metadata"]
        if labels:
            meta.setdefault("labels", {}).update(labels)
        if annotations:
            meta.setdefault("annotations", {}).update(annotations)
        if cluster.store.get(CRDS, "", meta["name"]) is not None:
            continue
        try:
            cluster.create(resource, doc)
            created.append(meta["name"])
        except ApiError as exc:
            if exc.code != 409:
                raise
    return created


def serve_api(cluster, ref, provider=None, verbs=None, alias_of=None):
    """Serve ``ref`` as an aggregated API (no CRD object); ``provider`` computes its objects."""
    doc = crd_document(ref)
    spec = doc["spec"]
    if cluster.registry.for_storage_key(spec["group"], spec["names"]["plural"]) is not None:
        return
    cluster.validator.register_crd(doc)
    cluster.registry.add_api(doc, provider=provider, verbs=verbs, alias_of=alias_of)
