"""The import check (tools/import_check.py, a step of make test) finds cycles and upward imports."""

import importlib.util
import os

TOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tools",
                    "import_check.py")


def load_tool():
    spec = importlib.util.spec_from_file_location("import_check", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_cycle_and_an_upward_import_are_each_one_line():
    tool = load_tool()
    graph = {
        "plugins.module_utils.config.schema": {"plugins.module_utils.matrix.benchmark"},   # schema (4) -> a domain (5)
        "plugins.module_utils.matrix.benchmark": {"plugins.module_utils.config.schema"},
        "plugins.module_utils.errors": set(),
        "kubesim.a": {"kubesim.b"}, "kubesim.b": {"kubesim.c"}, "kubesim.c": {"kubesim.a"},
    }
    found = tool.problems(graph)
    assert "import cycle: kubesim.a <-> kubesim.b <-> kubesim.c" in found
    assert "import cycle: plugins.module_utils.config.schema <-> plugins.module_utils.matrix.benchmark" in found
    assert ("upward import: plugins.module_utils.config.schema (layer 4) imports plugins.module_utils.matrix.benchmark "
            "(layer 5)") in found
    assert len(found) == 3


def test_lazy_and_relative_imports_count(tmp_path):
    tool = load_tool()
    package = tmp_path / "kubesim"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from kubesim import b\n    return b\n")
    (package / "b.py").write_text("from . import a\n")
    known = {"kubesim": str(package / "__init__.py"), "kubesim.a": str(package / "a.py"), "kubesim.b": str(package / "b.py")}
    assert tool.imports_of("kubesim.a", known["kubesim.a"], known) == {"kubesim.b"}
    assert tool.imports_of("kubesim.b", known["kubesim.b"], known) == {"kubesim.a"}
    graph = {name: tool.imports_of(name, path, known) for name, path in known.items()}
    assert tool.strongly_connected(graph) == [["kubesim.a", "kubesim.b"]]


def test_the_collection_and_kubesim_have_no_cycle_and_no_upward_import():
    tool = load_tool()
    files = tool.module_files()
    graph = {module: tool.imports_of(module, path, files) for module, path in files.items()}
    assert len(graph) > 200 and tool.problems(graph) == []


def load_mover():
    path = os.path.join(os.path.dirname(TOOL), "move_module.py")
    spec = importlib.util.spec_from_file_location("move_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_moving_a_module_rewrites_every_form_of_reference_and_keeps_local_names():
    mover = load_mover()
    prefix = mover.PREFIX
    text = "\n".join([
        "from %s import config" % prefix,
        "from %s import config as config_lib  # noqa" % prefix,
        "    from %s import artifacts, config, errors" % prefix,
        "from %s.config import ConfigError" % prefix,
        "patch('%s.config.load')" % prefix,
        "see plugins/module_utils/config.py and module_utils/config.py",
        "from %s import config_schema" % prefix,
    ])
    assert mover.rewrite_text(text, "config", "config.loading").split("\n") == [
        "from %s.config import loading as config" % prefix,
        "from %s.config import loading as config_lib  # noqa" % prefix,
        "    from %s import artifacts, errors" % prefix,
        "    from %s.config import loading as config" % prefix,
        "from %s.config.loading import ConfigError" % prefix,
        "patch('%s.config.loading.load')" % prefix,
        "see plugins/module_utils/config/loading.py and module_utils/config/loading.py",
        "from %s import config_schema" % prefix,
    ]
