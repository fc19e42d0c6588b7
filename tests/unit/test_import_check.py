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
    assert tool.imports_of("kubesim.a", known["kubesim.a"], known) == ({"kubesim.b"}, set())
    assert tool.imports_of("kubesim.b", known["kubesim.b"], known) == ({"kubesim.a"}, set())
    graph = tool.import_graph(known)
    assert tool.strongly_connected(graph) == [["kubesim.a", "kubesim.b"]]


def test_a_package_whose_init_imports_its_members_is_a_step_of_every_import_below_it(tmp_path):
    # the cycle sanity's import test found: engine imported executors.base, which ran
    # executors/__init__.py, which imported an executor that read engine's constants
    tool = load_tool()
    for name in ("matrix", "executors", "quiet"):
        (tmp_path / name).mkdir()
    files = {
        "matrix": "", "matrix.engine": "from executors import base\nPREVIOUS = 'previous'\n",
        "executors": "from executors import hosts\n", "executors.base": "", "executors.local": "from executors import base\n",
        "executors.hosts": "from matrix import engine\nKEPT = engine.PREVIOUS\n",
        "quiet": '"""a package with a docstring only"""\n', "quiet.a": "from matrix import engine\n",
        "quiet.b": "from quiet import a\n",
    }
    known = {}
    for name, text in files.items():
        path = tmp_path / (name.replace(".", "/") + ("/__init__.py" if "." not in name else ".py"))
        path.write_text(text)
        known[name] = str(path)
    graph = tool.import_graph(known)
    assert "executors" in graph["matrix.engine"]          # the package's __init__ runs first
    assert "executors" not in graph["executors.local"]    # its own package: initialised already
    assert "quiet" not in graph["matrix.engine"] and "quiet" not in graph["quiet.b"]
    assert tool.strongly_connected(graph) == [["executors", "executors.hosts", "matrix.engine"]]


def test_the_collection_and_kubesim_have_no_cycle_and_no_upward_import():
    tool = load_tool()
    files = tool.module_files()
    graph = tool.import_graph(files)
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
