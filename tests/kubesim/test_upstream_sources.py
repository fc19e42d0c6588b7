"""kubesim stays honest: every controller names the upstream source it models, in its module docstring,
in kubesim/upstream.py and in docs/kubesim.md's table, and every transient state it simulates is
documented there (and can be turned off by name)."""

import os
import re
import sys

import pytest

from kubesim import upstream
from kubesim.app import KubeSim, Settings
from kubesim.controllers.registry import BUILTIN

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs", "kubesim.md")


def table_rows():
    with open(DOCS, encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("## Upstream sources", 1)[1].split("\n## ", 1)[0]
    return {row.split("|")[1].strip().strip("`"): row for row in section.splitlines() if row.startswith("| `")}


@pytest.mark.parametrize("cls", BUILTIN, ids=[c.name for c in BUILTIN])
def test_each_controller_names_its_upstream_repository_commit_and_files(cls):
    source = upstream.SOURCES.get(cls.name)
    assert source is not None, "kubesim/upstream.py has no entry for controller %s" % cls.name
    assert source.files
    docstring = sys.modules[cls.__module__].__doc__ or ""
    rows = table_rows()
    assert cls.name in rows, "docs/kubesim.md's table has no row for %s" % cls.name
    if source.repository is None:
        return   # kubesim's own (the demo operator)
    assert re.fullmatch(r"[0-9a-f]{40}", source.commit or ""), cls.name
    repository = source.repository.split("github.com/", 1)[1]
    assert repository in docstring and source.commit in docstring, (
        "the docstring of %s (controller %s) must name %s and commit %s" % (cls.__module__, cls.name, repository,
                                                                            source.commit))
    assert source.commit[:12] in rows[cls.name]


def test_every_transient_state_is_documented_and_can_be_turned_off():
    names = [name for cls in BUILTIN for name in cls.transients]
    assert len(names) == len(set(names))
    with open(DOCS, encoding="utf-8") as handle:
        docs = handle.read()
    for name in names:
        assert "`%s`" % name in docs, name
    with pytest.raises(ValueError, match="--no-transient nope: no such transient state"):
        KubeSim(Settings(disabled_transients=["nope"])).check_settings()
