# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a read of the cluster asks for (``Query``) and how it fails (``FetchError``), for ``kube/reads.py``
and the waits (``kube/waits/base.py`` re-exports both). A module of its own, outside the ``waits``
package: importing that package imports every judge, and ``k8s_read`` and ``k8s_capture``, which judge
nothing, would carry them all in their payload (standard library only).
"""

from __future__ import annotations


class FetchError(Exception):
    """The API answered a query with an error; ``terminal`` when retrying cannot help (401, 403)."""

    def __init__(self, message, terminal=False):
        super().__init__(message)
        self.terminal = terminal


class Query:
    """What to read: a kind, optionally one namespace, one name, label and field selectors."""

    __slots__ = ("api_version", "kind", "namespace", "name", "label_selectors", "field_selectors")

    def __init__(self, api_version, kind, namespace=None, name=None, label_selectors=(), field_selectors=()):
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace or None
        self.name = name or None
        self.label_selectors = tuple(s for s in label_selectors or () if s)
        self.field_selectors = tuple(s for s in field_selectors or () if s)

    def describe(self):
        where = ""
        if self.namespace:
            where = " -n %s" % self.namespace
        what = "%s %s" % (self.kind, self.name) if self.name else "%ss" % self.kind
        if self.label_selectors:
            what += " (%s)" % ",".join(self.label_selectors)
        return what + where

    def as_dict(self):
        return {key: getattr(self, key) for key in self.__slots__}

    def __eq__(self, other):
        return isinstance(other, Query) and self.as_dict() == other.as_dict()

    def __hash__(self):
        return hash(tuple(getattr(self, key) for key in self.__slots__))
