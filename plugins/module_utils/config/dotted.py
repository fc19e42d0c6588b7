# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Settings given as dotted keys (``spec.components.kserve.serving.managementState: Removed``), as the
reference's ``rhods update_datasciencecluster --extra_settings`` takes them, applied to an object."""

from __future__ import annotations

import copy

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError


def apply(obj, settings, what="extra_settings"):
    """A copy of ``obj`` with each ``dotted.key: value`` of ``settings`` set (missing levels created)."""
    if not isinstance(settings, dict):
        raise ConfigError("%s: expected a mapping of dotted keys to values, got %s" % (what, type(settings).__name__))
    result = copy.deepcopy(obj)
    for key, value in settings.items():
        parts = str(key).split(".")
        if not all(parts):
            raise ConfigError("%s: key %r: expected dotted names such as spec.components.kserve.managementState" % (what, key))
        node = result
        for depth, part in enumerate(parts[:-1]):
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            elif not isinstance(child, dict):
                raise ConfigError("%s: key %r: %s is a %s, not a mapping" % (what, key, ".".join(parts[:depth + 1]),
                                                                             type(child).__name__))
            node = child
        node[parts[-1]] = value
    return result
