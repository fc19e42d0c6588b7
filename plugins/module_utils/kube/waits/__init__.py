# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The judges of cluster waits, by name (see ``base.py``): one registry, one module per domain.

``judge(name)`` returns a judge; ``JUDGES`` maps every name to its class. A new judge is a
subclass of ``base.Judge`` in the module of its domain, listed in that module's ``JUDGES``.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits import (
    core, gpu, monitoring, odh, olm, openshift, serving, tekton, training)
from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.base import WaitError

JUDGES = {cls.name: cls for module in (core, olm, gpu, odh, serving, training, tekton, openshift, monitoring) for cls in module.JUDGES}


def judge(name):
    """The judge registered as ``name`` (WaitError naming the known ones otherwise)."""
    try:
        return JUDGES[name]()
    except KeyError:
        raise WaitError("wait: unknown judge %r (known: %s)" % (name, ", ".join(sorted(JUDGES)))) from None
