# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Configuration documents, presets and overrides.

A configuration document is a YAML mapping with top-level sections (``tests``,
``postprocess``, ``export``...) and a ``ci_presets`` section. A preset maps dotted
keys to values; ``extends: [a, b]`` applies other presets at its position.

Rules (see docs/configuration.md):

* a preset or an override cannot create a key the document does not have;
* a dict value replaces the whole subtree (so it may bring new keys inside it);
* a cycle in ``extends`` is an error that prints the chain;
* an unknown preset is an error that lists the known ones.

Only the standard library is imported at module level; PyYAML is imported
where a document is read.
"""

from __future__ import annotations

import copy
import difflib
import os

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError

PRESETS_SECTION = "ci_presets"
EXTENDS_KEY = "extends"
# keys of ci_presets that select presets rather than define one (the reference's ci_presets.name / .names):
# a document (or an overlay) that sets them has those presets applied with its own values
SELECTION_KEYS = ("name", "names")

# sections renamed in this release: the old name is accepted, with a warning
RENAMED_SECTIONS = {"matbench": "postprocess"}


def type_name(value):
    """The YAML/JSON kind of a value (Ansible wraps values in tagged subclasses)."""
    for kind, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"), (dict, "dict"),
                       (list, "list"), (tuple, "list")):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


# --------------------------------------------------------------------------
# loading


def _yaml_loader_without_duplicates():
    import yaml

    # libyaml's parser when PyYAML has it (every playbook run reads the configuration and its presets)
    base = bounded_input.safe_yaml_loader()

    class UniqueKeyLoader(base):  # pylint: disable=too-many-ancestors
        """A safe loader that refuses a key defined twice in the same mapping."""

        def construct_mapping(self, node, deep=False):
            seen = {}
            for key_node, _value_node in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    hash(key)
                except TypeError:
                    continue
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None,
                        "key %r defined twice (first on line %d)" % (key, seen[key] + 1),
                        key_node.start_mark,
                    )
                seen[key] = key_node.start_mark.line
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader


def parse_yaml_text(text, source):
    """Parse YAML text; errors name the source, line and column. Bounded (``bounded_input``): a
    document past its size or depth, or holding ``.inf``/``.nan``, is one line naming the key."""
    import yaml

    def load(document):
        return yaml.load(document, Loader=_yaml_loader_without_duplicates())  # nosec B506 - SafeLoader subclass

    try:
        return bounded_input.parse(load, text, source)
    except bounded_input.InputError as exc:
        raise ConfigError(str(exc)) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = "line %d, column %d" % (mark.line + 1, mark.column + 1) if mark else "unknown position"
        problem = exc.problem or exc.context or "malformed YAML"
        raise ConfigError("%s: %s: %s" % (source, where, problem)) from None
    except yaml.YAMLError as exc:
        raise ConfigError("%s: malformed YAML: %s" % (source, " ".join(str(exc).split()))) from None


def load_yaml_file(path, what):
    """YAML of a file; an unreadable file or malformed YAML names ``what`` and the path."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise ConfigError("%s %s: cannot be read: %s" % (what, path, exc.strerror or exc)) from None
    return parse_yaml_text(text, "%s %s" % (what, path))


def load_config_document(path, warnings=None):
    """Read a configuration document; it must be a YAML mapping.

    A section under a name of ``RENAMED_SECTIONS`` is moved to its new name,
    with a one-line warning appended to ``warnings``.
    """
    document = load_yaml_file(path, "config file")
    if not isinstance(document, dict):
        raise ConfigError(
            "config file %s: expected a YAML mapping of sections, got %s" % (path, type_name(document))
        )
    presets = document.get(PRESETS_SECTION, {})
    if presets is None:
        document[PRESETS_SECTION] = {}
    elif not isinstance(presets, dict):
        raise ConfigError("config file %s: '%s' must be a mapping of preset names" % (path, PRESETS_SECTION))
    return migrate_renamed_sections(document, "config file %s" % path, warnings)


def migrate_renamed_sections(document, source, warnings=None):
    """Move sections (and preset keys) from their old names to the new ones."""
    for old, new in RENAMED_SECTIONS.items():
        if old not in document:
            continue
        if new in document:
            raise ConfigError("%s: has both '%s' and its new name '%s'; keep '%s' only" % (source, old, new, new))
        document = {(new if key == old else key): value for key, value in document.items()}
        _warn(warnings, "%s: section '%s' is deprecated, renamed '%s' (the old name is accepted for one release)"
              % (source, old, new))
    presets = document.get(PRESETS_SECTION) or {}
    for name, preset in presets.items():
        if isinstance(preset, dict):
            presets[name] = migrate_renamed_keys(preset, "preset '%s'" % name, warnings)
    return document


def migrate_renamed_keys(mapping, source, warnings=None):
    """Dotted keys under a renamed section get the section's new name (with a warning)."""
    migrated = {}
    for key, value in mapping.items():
        head, sep, rest = str(key).partition(".")
        if head in RENAMED_SECTIONS:
            new_key = RENAMED_SECTIONS[head] + sep + rest
            _warn(warnings, "%s: key '%s' is deprecated, use '%s'" % (source, key, new_key))
            key = new_key
        migrated[key] = value
    return migrated


def _warn(warnings, message):
    if warnings is not None and message not in warnings:
        warnings.append(message)


# --------------------------------------------------------------------------
# dotted keys


def flatten_keys(tree, prefix=""):
    """Every dotted key of a nested mapping (sections and leaves)."""
    keys = []
    if isinstance(tree, dict):
        for key, value in tree.items():
            dotted = "%s.%s" % (prefix, key) if prefix else str(key)
            keys.append(dotted)
            keys.extend(flatten_keys(value, dotted))
    return keys


def close_matches(key, tree, limit=3):
    """Existing dotted keys closest to ``key`` (for error messages)."""
    candidates = flatten_keys(tree)
    matches = difflib.get_close_matches(key, candidates, n=limit, cutoff=0.6)
    if not matches:
        # compare the last component, it is where typos usually are
        last = key.rsplit(".", 1)[-1]
        by_leaf = [c for c in candidates if difflib.get_close_matches(last, [c.rsplit(".", 1)[-1]], cutoff=0.75)]
        matches = by_leaf[:limit]
    return matches


def _describe_matches(matches):
    if not matches:
        return "no similar key exists"
    return "closest existing keys: " + ", ".join(matches)


_MISSING = object()


def get_dotted(tree, key, default=_MISSING):
    """Value at a dotted key; a missing key is a ConfigError naming it."""
    node = tree
    walked = []
    for part in key.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
            walked.append(part)
            continue
        if default is not _MISSING:
            return default
        if walked and not isinstance(node, dict):
            raise ConfigError(
                "config key '%s' does not exist: '%s' is a %s, not a section"
                % (key, ".".join(walked), type_name(node))
            )
        raise ConfigError("config key '%s' does not exist; %s" % (key, _describe_matches(close_matches(key, tree))))
    return node


def set_dotted(tree, key, value, origin="override"):
    """Set an existing dotted key (in place). Creating a key is an error."""
    if not isinstance(key, str) or not key or key.startswith(".") or key.endswith(".") or ".." in key:
        raise ConfigError("%s: invalid key %r, expected a dotted key such as 'tests.benchmark.timeout_s'" % (origin, key))
    parts = key.split(".")
    node = tree
    for depth, part in enumerate(parts):
        if not isinstance(node, dict):
            raise ConfigError(
                "%s: cannot set '%s': '%s' is a %s, not a section"
                % (origin, key, ".".join(parts[:depth]), type_name(node))
            )
        if part not in node:
            raise ConfigError(
                "%s: key '%s' does not exist in the configuration (presets and overrides cannot create keys); %s"
                % (origin, key, _describe_matches(close_matches(key, tree)))
            )
        if depth == len(parts) - 1:
            node[part] = unshared_copy(value)
        else:
            node = node[part]


# --------------------------------------------------------------------------
# presets


def parse_preset_names(value, source="preset"):
    """Accept None, '', 'a', 'a,b', ['a', 'b'] (CLI, AWX survey, YAML or inventory)."""
    if value is None:
        return []
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, (list, tuple)):
        items = []
        for item in value:
            if not isinstance(item, str):
                raise ConfigError("%s: expected preset names (strings), got %r" % (source, item))
            items.extend(item.split(","))
    else:
        raise ConfigError("%s: expected a name or a comma-separated list of names, got %r" % (source, value))
    return [item.strip() for item in items if item.strip()]


def known_presets(document):
    return sorted(name for name in document.get(PRESETS_SECTION) or {} if name not in SELECTION_KEYS)


def known_presets_in_order(document):
    """The presets of a document (a mapping or a path) in the order it lists them."""
    if not isinstance(document, dict):
        document = load_config_document(document)
    return [name for name in document.get(PRESETS_SECTION) or {} if name not in SELECTION_KEYS]


def document_preset_selection(document):
    """The presets the document itself selects: ``ci_presets.names`` (a list or a comma-separated string),
    then ``ci_presets.name`` (one name), as the reference's configuration selects them."""
    presets = document.get(PRESETS_SECTION) or {}
    names = parse_preset_names(presets.get("names"), source="%s.names" % PRESETS_SECTION)
    single = presets.get("name")
    if single is not None and not isinstance(single, str):
        raise ConfigError("%s.name: expected one preset name, got %s" % (PRESETS_SECTION, type_name(single)))
    return names + parse_preset_names(single, source="%s.name" % PRESETS_SECTION)


def _unknown_preset_error(name, document, referrer=None):
    known = known_presets(document)
    suggestion = difflib.get_close_matches(name, known, n=1)
    hint = " (did you mean '%s'?)" % suggestion[0] if suggestion else ""
    who = "preset '%s' extends unknown preset '%s'" % (referrer, name) if referrer else "unknown preset '%s'" % name
    return ConfigError("%s%s; known presets: %s" % (who, hint, ", ".join(known) if known else "(none)"))


def apply_preset(config, document, name, applied, chain=()):
    """Apply one preset (and what it extends, at its position) to ``config``."""
    presets = document.get(PRESETS_SECTION) or {}
    if name in chain:
        raise ConfigError("preset cycle in 'extends': %s" % " -> ".join(list(chain) + [name]))
    if name not in presets or name in SELECTION_KEYS:
        raise _unknown_preset_error(name, document, referrer=chain[-1] if chain else None)
    preset = presets[name]
    if preset is None:
        preset = {}
    if not isinstance(preset, dict):
        raise ConfigError("preset '%s': expected a mapping of dotted keys to values, got %s" % (name, type_name(preset)))
    chain = tuple(chain) + (name,)
    for key, value in preset.items():
        if key == EXTENDS_KEY:
            parents = [value] if isinstance(value, str) else value
            if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
                raise ConfigError("preset '%s': 'extends' must be a preset name or a list of names" % name)
            for parent in parents:
                apply_preset(config, document, parent, applied, chain)
            continue
        if key == PRESETS_SECTION or str(key).startswith(PRESETS_SECTION + "."):
            raise ConfigError("preset '%s': cannot modify the '%s' section" % (name, PRESETS_SECTION))
        set_dotted(config, str(key), value, origin="preset '%s'" % name)
    applied.append(name)
    return config


def parse_overrides(value, source="overrides"):
    """Overrides: a mapping, or a JSON/YAML string of one. Empty gives {}."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = bounded_input.load_json(value, source)
        except bounded_input.NotJSON:
            value = parse_yaml_text(value, source)
        except bounded_input.InputError as exc:
            raise ConfigError(str(exc)) from None
    else:
        try:
            bounded_input.check_tree(value, source)
        except bounded_input.InputError as exc:
            raise ConfigError(str(exc)) from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError("%s: expected a mapping of dotted keys to values, got %s" % (source, type_name(value)))
    return value


def load_overrides_file(path):
    return parse_overrides(load_yaml_file(path, "overrides file"), source="overrides file %s" % path)


def apply_overrides(config, overrides, source="overrides"):
    for key, value in overrides.items():
        if str(key) == PRESETS_SECTION or str(key).startswith(PRESETS_SECTION + "."):
            raise ConfigError("%s: cannot modify the '%s' section" % (source, PRESETS_SECTION))
        set_dotted(config, str(key), value, origin=source)
    return config


class ResolvedConfig:
    """The effective configuration and how it was obtained."""

    def __init__(self, config, presets_applied, source, overrides, inventory=None, warnings=None):
        self.config = config
        self.presets_applied = presets_applied
        self.source = source
        self.overrides = overrides
        self.inventory = inventory or {"presets": [], "overrides": {}}
        self.warnings = warnings or []


def unshared_copy(value):
    """A copy of a configuration tree in which no mapping or list appears twice: a YAML alias (``*name``)
    becomes a copy of its anchor, so a preset or an override that sets a key under one of them leaves
    the other as written (``copy.deepcopy`` would keep them one object)."""
    if isinstance(value, dict):
        return {key: unshared_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [unshared_copy(item) for item in value]
    return copy.deepcopy(value)


def resolve_config(document, presets=None, overrides=None, overrides_file=None, source="<memory>",
                   inventory_presets=None, inventory_overrides=None):
    """The effective configuration of a document, in this order (the later wins):

    1. the document's own values, then the presets it selects itself (``ci_presets.names``, ``ci_presets.name``);
    2. ``inventory_presets`` then ``inventory_overrides`` (inventory variables
       ``perfscale_presets`` / ``perfscale_overrides``: per-lab, per-cluster settings);
    3. ``presets`` (``-e preset=``), then ``overrides_file``, then ``overrides``
       (``-e overrides=``).

    ``document`` is a mapping (already loaded) or a path. The result does not
    contain the ``ci_presets`` section. Nothing is modified in place.
    """
    warnings = []
    if not isinstance(document, dict):
        source = str(document)
        document = load_config_document(document, warnings)
    else:
        document = migrate_renamed_sections(copy.deepcopy(document), source, warnings)
    config = unshared_copy({k: v for k, v in document.items() if k != PRESETS_SECTION})
    applied = []
    for name in document_preset_selection(document):
        apply_preset(config, document, name, applied)
    inventory_names = parse_preset_names(inventory_presets, source="perfscale_presets")
    for name in inventory_names:
        apply_preset(config, document, name, applied)
    inventory = migrate_renamed_keys(parse_overrides(inventory_overrides, source="perfscale_overrides"),
                                     "perfscale_overrides", warnings)
    apply_overrides(config, inventory, source="perfscale_overrides (inventory)")
    for name in parse_preset_names(presets):
        apply_preset(config, document, name, applied)
    merged_overrides = {}
    if overrides_file:
        file_overrides = migrate_renamed_keys(load_overrides_file(overrides_file), "overrides file %s" % overrides_file,
                                              warnings)
        apply_overrides(config, file_overrides, source="overrides file %s" % overrides_file)
        merged_overrides.update(file_overrides)
    inline = migrate_renamed_keys(parse_overrides(overrides), "overrides", warnings)
    apply_overrides(config, inline)
    merged_overrides.update(inline)
    return ResolvedConfig(config, applied, source, merged_overrides,
                          inventory={"presets": inventory_names, "overrides": inventory}, warnings=warnings)


def default_config_path(collection_root):
    return os.path.join(collection_root, "config", "config.yaml")
