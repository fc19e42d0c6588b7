"""OLM's catalogs: catalog fixtures, the bundles (ClusterServiceVersions) they hold, PackageManifests.

A catalog fixture (``kubesim/catalogs/*.yaml``, more with ``--catalog-dir``) is
what a catalog image serves: packages, their channels (versions oldest first;
the last is the channel head, each replaces the previous one), the CRDs each
bundle owns (``group/Kind``, schemas from :mod:`kubesim.apis`), its operator
Deployments and its ``alm-examples``. A CatalogSource serves the fixtures named
by its annotation ``kubesim.perfscale.io/catalog`` (comma separated) or, else,
the fixtures whose ``images`` patterns match its ``spec.image``.

PackageManifests (``packages.operators.coreos.com/v1``) are computed as
OLM's packageserver does (``pkg/package-server/provider/registry.go``): one per
package of every READY CatalogSource; a list in a namespace returns that
namespace's packages plus the global catalog namespace's, with
``metadata.namespace`` set to the namespace asked; ``status.channels[]`` has
``currentCSV``, ``currentCSVDesc`` (version, annotations with ``alm-examples``,
owned CRDs, install modes...) and ``entries``.
"""

import copy
import fnmatch
import glob
import json
import os

import yaml

from kubesim import apis

CATALOG_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "catalogs")
CATALOG_SOURCES = ("operators.coreos.com", "catalogsources")
INSTALL_MODES = ("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces")
CATALOG_ANNOTATION = "kubesim.perfscale.io/catalog"
# written by kubesim's CatalogSource controller on a grpc source (spec.address) whose registry pod
# serves a bundle image (operator-sdk run bundle: opm registry add -b IMAGE)
BUNDLE_ANNOTATION = "kubesim.perfscale.io/bundle-image"


class Package:
    """One package of a catalog fixture."""

    def __init__(self, catalog, data):
        self.catalog = catalog
        self.name = data["name"]
        self.display_name = data.get("displayName", self.name)
        self.provider = data.get("provider", "kubesim")
        self.csv_name_format = data.get("csvName", "{package}.v{version}")
        self.suggested_namespace = data.get("suggestedNamespace")
        self.install_modes = list(data.get("installModes") or ["AllNamespaces"])
        self.owns = list(data.get("owns") or ())
        self.deployments = list(data.get("deployments") or [self.name + "-controller-manager"])
        self.install_seconds = float(data.get("installSeconds", 15))
        self.channels = {name: [str(v) for v in versions] for name, versions in (data.get("channels") or {}).items()}
        if not self.channels:
            raise ValueError("catalog %s: package %s has no channels" % (catalog.name, self.name))
        self.default_channel = data.get("defaultChannel") or next(iter(self.channels))
        self.overrides = {str(k): v for k, v in (data.get("versions") or {}).items()}
        self.alm_examples = data.get("almExamples") or []
        self.description = data.get("description", "%s (a kubesim catalog fixture)" % self.display_name)

    def csv_name(self, version):
        return self.csv_name_format.format(package=self.name, version=version)

    def version_of(self, csv_name):
        for versions in self.channels.values():
            for version in versions:
                if self.csv_name(version) == csv_name:
                    return version
        return None

    def head(self, channel):
        versions = self.channels.get(channel)
        return self.csv_name(versions[-1]) if versions else None

    def next_in_channel(self, channel, csv_name):
        """The CSV that replaces ``csv_name`` in ``channel`` (None at the head or outside the channel)."""
        versions = self.channels.get(channel) or []
        names = [self.csv_name(v) for v in versions]
        if csv_name not in names:
            return None
        index = names.index(csv_name)
        return names[index + 1] if index + 1 < len(names) else None

    def in_channel(self, channel, csv_name):
        return csv_name in [self.csv_name(v) for v in self.channels.get(channel) or ()]

    def override(self, version, key, default=None):
        return (self.overrides.get(version) or {}).get(key, default)

    def owned_crds(self):
        owned = []
        for ref in self.owns:
            doc = apis.crd_document(ref)
            spec = doc["spec"]
            version = next((v["name"] for v in spec["versions"] if v.get("storage")), spec["versions"][0]["name"])
            owned.append({"name": doc["metadata"]["name"], "kind": spec["names"]["kind"], "version": version,
                          "displayName": spec["names"]["kind"], "description": "%s (%s)" % (spec["names"]["kind"],
                                                                                           spec["group"])})
        return owned

    def bundle(self, csv_name, channel=None):
        """The ClusterServiceVersion of ``csv_name`` as the bundle holds it."""
        version = self.version_of(csv_name)
        if version is None:
            return None
        channel = channel if channel and self.in_channel(channel, csv_name) else next(
            (c for c in self.channels if self.in_channel(c, csv_name)), None)
        versions = self.channels[channel]
        index = versions.index(version)
        image = "registry.kubesim.example.com/%s/%s:v%s" % (self.catalog.name, self.name, version)
        deployments = []
        for name in self.deployments:
            labels = {"app.kubernetes.io/name": name, "control-plane": "controller-manager"}
            deployments.append({"name": name, "label": dict(labels), "spec": {
                "replicas": 1, "selector": {"matchLabels": dict(labels)}, "strategy": {},
                "template": {"metadata": {"labels": dict(labels), "annotations": {"kubectl.kubernetes.io/default-container":
                                                                                 "manager"}},
                             "spec": {"serviceAccountName": name, "terminationGracePeriodSeconds": 10,
                                      "containers": [{"name": "manager", "image": image,
                                                      "env": [{"name": "OPERATOR_CONDITION_NAME", "value": csv_name}],
                                                      "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}}}]}}}})
        annotations = {
            "alm-examples": json.dumps(self.alm_examples, indent=2),
            "capabilities": "Full Lifecycle", "categories": "AI/Machine Learning", "containerImage": image,
            "createdAt": "2025-10-01T00:00:00Z", "description": self.description,
            "operatorframework.io/suggested-namespace": self.suggested_namespace or "",
            "operators.operatorframework.io/builder": "operator-sdk-v1.39.0",
            "support": self.provider,
        }
        if not self.suggested_namespace:
            del annotations["operatorframework.io/suggested-namespace"]
        spec = {
            "displayName": self.display_name, "description": self.description, "version": version,
            "maturity": channel, "provider": {"name": self.provider}, "minKubeVersion": "1.25.0",
            "keywords": [self.name], "links": [{"name": self.display_name, "url": "https://example.com/" + self.name}],
            "maintainers": [{"name": self.provider, "email": "maintainers@example.com"}],
            "installModes": [{"type": mode, "supported": mode in self.install_modes} for mode in INSTALL_MODES],
            "customresourcedefinitions": {"owned": self.owned_crds()},
            "install": {"strategy": "deployment", "spec": {
                "deployments": deployments,
                "permissions": [{"serviceAccountName": d, "rules": [{"apiGroups": [""], "resources": ["configmaps"],
                                                                     "verbs": ["get", "list", "watch"]}]}
                                for d in self.deployments],
                "clusterPermissions": [{"serviceAccountName": d, "rules": [{"apiGroups": ["*"], "resources": ["*"],
                                                                            "verbs": ["*"]}]}
                                       for d in self.deployments]}},
            "relatedImages": [{"name": "manager", "image": image}],
        }
        if index > 0:
            spec["replaces"] = self.csv_name(versions[index - 1])
        return {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
                "metadata": {"name": csv_name, "annotations": annotations}, "spec": spec}


class CatalogFixture:
    def __init__(self, data, path=None):
        self.name = data["name"]
        self.path = path
        self.display_name = data.get("displayName", self.name)
        self.publisher = data.get("publisher", "kubesim")
        self.image = data.get("image", "registry.kubesim.example.com/%s:latest" % self.name)
        self.images = list(data.get("images") or [self.image])
        self.packages = {}
        for entry in data.get("packages") or ():
            package = Package(self, entry)
            self.packages[package.name] = package

    def serves_image(self, image):
        return any(fnmatch.fnmatch(image or "", pattern) for pattern in self.images)


class Catalogs:
    """Every catalog fixture kubesim knows (built-in ones plus ``extra_dirs``)."""

    def __init__(self, extra_dirs=()):
        self.fixtures = {}
        for directory in (CATALOG_DIR,) + tuple(extra_dirs):
            for path in sorted(glob.glob(os.path.join(directory, "*.yaml"))):
                with open(path, encoding="utf-8") as handle:
                    fixture = CatalogFixture(yaml.safe_load(handle), path)
                self.fixtures[fixture.name] = fixture

    def for_source(self, catalog_source):
        """The fixtures a CatalogSource serves: by annotation, else by image; [] when none. A
        source serving one bundle serves the fixture package that bundle belongs to."""
        annotations = catalog_source["metadata"].get("annotations") or {}
        names = (annotations.get(CATALOG_ANNOTATION) or "").strip()
        if names:
            return [self.fixtures[n.strip()] for n in names.split(",") if n.strip() in self.fixtures]
        if annotations.get(BUNDLE_ANNOTATION):
            package = self.package_of_bundle(annotations[BUNDLE_ANNOTATION])
            return [BundleCatalog(package)] if package else []
        image = (catalog_source.get("spec") or {}).get("image")
        return [f for f in self.fixtures.values() if f.serves_image(image)]

    def package_of_bundle(self, image):
        """The package a bundle image belongs to: its repository's last part without ``-bundle``
        (``.../gpu-operator-bundle:v24.9.2`` -> ``gpu-operator-certified``); None when none."""
        repository = image.rsplit("@", 1)[0].rsplit(":", 1)[0] if "/" in image else image
        stem = repository.rsplit("/", 1)[-1]
        stem = stem[:-len("-bundle")] if stem.endswith("-bundle") else stem
        for fixture in self.fixtures.values():
            for name, package in sorted(fixture.packages.items()):
                if name == stem or name.startswith(stem + "-"):
                    return package
        return None

    def package(self, catalog_source, name):
        for fixture in self.for_source(catalog_source):
            if name in fixture.packages:
                return fixture.packages[name]
        return None

    def packages(self, catalog_source):
        found = {}
        for fixture in self.for_source(catalog_source):
            for name, package in fixture.packages.items():
                found.setdefault(name, package)
        return list(found.values())


class BundleCatalog:
    """What a registry serving one bundle serves: that bundle's package."""

    def __init__(self, package):
        self.name = package.catalog.name
        self.packages = {package.name: package}


def source_ready(catalog_source):
    state = ((catalog_source.get("status") or {}).get("connectionState") or {}).get("lastObservedState")
    return state == "READY"


def csv_description(bundle):
    """``currentCSVDesc`` (operators.CreateCSVDescription)."""
    spec = bundle["spec"]
    return {"displayName": spec.get("displayName"), "description": spec.get("description"),
            "version": spec.get("version"), "provider": spec.get("provider"),
            "annotations": copy.deepcopy(bundle["metadata"].get("annotations") or {}),
            "installModes": copy.deepcopy(spec.get("installModes")), "keywords": spec.get("keywords"),
            "links": spec.get("links"), "maintainers": spec.get("maintainers"), "maturity": spec.get("maturity"),
            "minKubeVersion": spec.get("minKubeVersion"), "relatedImages": [i["image"] for i in spec.get("relatedImages") or ()],
            "customresourcedefinitions": copy.deepcopy(spec.get("customresourcedefinitions")),
            "apiservicedefinitions": {}, "nativeAPIs": []}


class PackageManifestProvider:
    """Computes PackageManifests from the READY CatalogSources (the packageserver's ``List``/``Get``)."""

    def __init__(self, cluster, catalogs, global_namespace):
        self.cluster = cluster
        self.catalogs = catalogs
        self.global_namespace = global_namespace

    def _manifests(self, catalog_source, namespace):
        meta = catalog_source["metadata"]
        spec = catalog_source.get("spec") or {}
        for package in self.catalogs.packages(catalog_source):
            channels = []
            default_bundle = None
            for channel, versions in package.channels.items():
                head = package.head(channel)
                bundle = package.bundle(head, channel)
                if channel == package.default_channel or default_bundle is None:
                    default_bundle = bundle
                channels.append({"name": channel, "currentCSV": head, "currentCSVDesc": csv_description(bundle),
                                 "entries": [{"name": package.csv_name(v), "version": v} for v in reversed(versions)]})
            labels = dict(meta.get("labels") or {})
            labels.update({"catalog": meta["name"], "catalog-namespace": meta["namespace"],
                           "provider": package.provider, "provider-url": "",
                           "operatorframework.io/arch.amd64": "supported", "operatorframework.io/os.linux": "supported"})
            yield {"apiVersion": "packages.operators.coreos.com/v1", "kind": "PackageManifest",
                   "metadata": {"name": package.name, "namespace": namespace or meta["namespace"], "labels": labels,
                                "creationTimestamp": meta.get("creationTimestamp")},
                   "spec": {},
                   "status": {"catalogSource": meta["name"], "catalogSourceDisplayName": spec.get("displayName", ""),
                              "catalogSourcePublisher": spec.get("publisher", ""),
                              "catalogSourceNamespace": meta["namespace"], "packageName": package.name,
                              "defaultChannel": package.default_channel,
                              "provider": {"name": package.provider}, "channels": channels}}

    def list(self, namespace):
        sources, _ = self.cluster.store.list(CATALOG_SOURCES)
        items = []
        for catalog_source in sources:
            ns = catalog_source["metadata"]["namespace"]
            if namespace and ns not in (namespace, self.global_namespace):
                continue
            if not source_ready(catalog_source):
                continue
            items.extend(self._manifests(catalog_source, namespace))
        items.sort(key=lambda m: (m["metadata"]["name"], m["status"]["catalogSource"]))
        return items

    def get(self, namespace, name):
        return next((m for m in self.list(namespace) if m["metadata"]["name"] == name), None)
