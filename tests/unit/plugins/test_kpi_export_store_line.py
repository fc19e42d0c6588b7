"""The kpi_export callback names the results store a run used, at the end of the playbook."""

import types

from ansible_collections.perfscale.topsail.plugins.callback import kpi_export


class Screen:
    def __init__(self):
        self.verbosity = 0
        self.lines = []

    def display(self, msg, **_kwargs):
        self.lines.append(msg)

    def warning(self, msg, **_kwargs):
        self.lines.append("[WARNING]: " + msg)


def callback():
    module = kpi_export.CallbackModule()
    module._display = Screen()
    return module


def ok(module, data):
    module.v2_runner_on_ok(types.SimpleNamespace(_result=data))


def bundle(path, export):
    return {"kind": "kpi", "file": path, "export": export, "secrets": {"secrets": {}}, "spool_dir": "/nowhere",
            "label_fields": [], "parts": []}


SQLITE_DEFAULT = {"backend": "sqlite", "enabled": True, "sqlite": {"path": None}, "opensearch": {"hosts": []}}


def test_the_store_of_a_run_the_play_exported_is_named_once_at_the_end(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    module = callback()
    ok(module, {"perfscale_export": bundle("/run/002__plots/kpi_records.json", SQLITE_DEFAULT)})
    ok(module, {"perfscale_export": bundle("/run/002__plots/regression_records.json", SQLITE_DEFAULT)})
    # the play's own export task delivered both bundles: the callback exports nothing again
    ok(module, {"perfscale_exported": ["/run/002__plots/kpi_records.json", "/run/002__plots/regression_records.json"]})
    module.v2_playbook_on_stats(None)
    assert module._display.lines == [
        "results store: sqlite %s/perfscale-topsail/results.sqlite (shared by every checkout of this account; "
        "set export.sqlite.path for one per project)" % tmp_path]
    module.v2_playbook_on_stats(None)
    assert len(module._display.lines) == 1


def test_a_project_store_is_named_with_its_key(tmp_path):
    module = callback()
    path = str(tmp_path / "project.sqlite")
    ok(module, {"perfscale_export": bundle("/run/k.json", dict(SQLITE_DEFAULT, sqlite={"path": path})),
                "perfscale_exported": ["/run/k.json"]})
    module.v2_playbook_on_stats(None)
    assert module._display.lines == ["results store: sqlite %s (export.sqlite.path)" % path]


def test_a_playbook_that_exports_nothing_names_no_store():
    module = callback()
    ok(module, {"changed": True})
    module.v2_playbook_on_stats(None)
    assert module._display.lines == []
