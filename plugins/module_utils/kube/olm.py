# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OLM: which bundle a subscription gets, read from the catalog's PackageManifests
(standard library only).

``select_bundle`` answers what ``cluster deploy_operator`` must know before it
subscribes: the channel (the package's default when none is given), the CSV
(the channel's head, or the entry of the version asked for), its
``alm-examples`` (the custom resources ``deploy_cr`` can create) and its install
modes. Every refusal is one line naming the package, the catalog and what
exists instead (channels, versions).
"""

from __future__ import annotations

import json

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import OlmError


def _of_catalog(manifests, package, catalog):
    mine = [m for m in manifests if (m.get("status") or {}).get("packageName", (m.get("metadata") or {}).get("name"))
            == package]
    if not mine:
        raise OlmError("package %s: no PackageManifest in the cluster (is its catalog source ready?)" % package)
    chosen = [m for m in mine if (m.get("status") or {}).get("catalogSource") == catalog]
    if not chosen:
        raise OlmError("package %s: not in catalog %s (it is in %s)" % (
            package, catalog, ", ".join(sorted({(m.get("status") or {}).get("catalogSource") or "?" for m in mine}))))
    return chosen[0]


def _version_of(entry_name, version):
    return entry_name == version or entry_name.endswith(".v" + version) or entry_name.endswith("." + version)


def select_bundle(manifests, package, catalog, channel="", version="", csv_base_name=""):
    """``{channel, csv, version, alm_examples, install_modes, catalog_namespace}`` or OlmError."""
    manifest = _of_catalog(manifests, package, catalog)
    status = manifest.get("status") or {}
    channels = {c.get("name"): c for c in status.get("channels") or []}
    channel = channel or status.get("defaultChannel") or ""
    if channel not in channels:
        raise OlmError("package %s in %s: no channel %r (channels: %s; default %s)" % (
            package, catalog, channel, ", ".join(sorted(channels)) or "none", status.get("defaultChannel")))
    entry = channels[channel]
    entries = entry.get("entries") or [{"name": entry.get("currentCSV"),
                                        "version": (entry.get("currentCSVDesc") or {}).get("version")}]
    if version:
        matching = [e for e in entries if e.get("version") == version or _version_of(e.get("name") or "", version)]
        if not matching:
            raise OlmError("package %s channel %s: no version %s (versions: %s)" % (
                package, channel, version, ", ".join(str(e.get("version") or e.get("name")) for e in entries)))
        csv, found_version = matching[0]["name"], matching[0].get("version") or version
    else:
        csv = entry.get("currentCSV") or entries[0]["name"]
        found_version = (entry.get("currentCSVDesc") or {}).get("version") or next(
            (e.get("version") for e in entries if e.get("name") == csv), None)
    description = entry.get("currentCSVDesc") or {}
    examples = []
    if csv == entry.get("currentCSV"):
        text = (description.get("annotations") or {}).get("alm-examples")
        try:
            examples = json.loads(text) if text else []
        except ValueError:
            examples = []
    return {
        "package": package,
        "catalog": catalog,
        "catalog_namespace": status.get("catalogSourceNamespace"),
        "channel": channel,
        "csv": csv,
        "csv_prefix": csv_base_name or package,
        "version": found_version,
        "alm_examples": examples if isinstance(examples, list) else [],
        "install_modes": {m.get("type"): bool(m.get("supported")) for m in description.get("installModes") or []},
    }


def pick_example(examples, deploy_cr):
    """The custom resource ``deploy_cr`` names: true - the first example; a kind - the example of that kind."""
    if not deploy_cr or deploy_cr in ("false", "False"):
        return None
    if not examples:
        raise OlmError("deploy_cr: the CSV has no alm-examples to create a custom resource from")
    if deploy_cr is True or str(deploy_cr).lower() == "true":
        return examples[0]
    for example in examples:
        if example.get("kind") == deploy_cr:
            return example
    raise OlmError("deploy_cr: no example of kind %s in the CSV's alm-examples (kinds: %s)" % (
        deploy_cr, ", ".join(str(e.get("kind")) for e in examples)))


def subscription_env(names):
    """``spec.config.env`` from ``config_env_names``: ``NAME`` (value "true") or ``NAME=value``."""
    env = []
    for name in names or ():
        key, sep, value = str(name).partition("=")
        if not key.strip():
            raise OlmError("config_env_names: %r is not NAME or NAME=value" % name)
        env.append({"name": key.strip(), "value": value if sep else "true"})
    return env
