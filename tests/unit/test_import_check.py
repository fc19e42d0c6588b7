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
        "plugins.module_utils.config.loading": {"plugins.module_utils.benchmark.job"},   # config (2) -> a domain (5)
        "plugins.module_utils.benchmark.job": {"plugins.module_utils.config.loading"},
        "plugins.module_utils.errors": set(),
        "kubesim.a": {"kubesim.b"}, "kubesim.b": {"kubesim.c"}, "kubesim.c": {"kubesim.a"},
    }
    found = tool.problems(graph)
    assert "import cycle: kubesim.a <-> kubesim.b <-> kubesim.c" in found
    assert "import cycle: plugins.module_utils.benchmark.job <-> plugins.module_utils.config.loading" in found
    assert ("upward import: plugins.module_utils.config.loading (layer 2) imports plugins.module_utils.benchmark.job "
            "(layer 5)") in found
    # across two packages, the cycle of modules is one of packages too
    assert ("package cycle: benchmark <-> config (plugins.module_utils.benchmark.job imports "
            "plugins.module_utils.config.loading; plugins.module_utils.config.loading imports "
            "plugins.module_utils.benchmark.job)") in found
    assert len(found) == 4


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


PREFIX = "ansible_collections.perfscale.topsail.plugins.module_utils"


def fake_tree(root, modules):
    """``modules`` ({path under plugins/module_utils: text}) written under ``root``, each package with an
    ``__init__.py``; returns the tool's ``module_files`` of it."""
    base = root / "plugins" / "module_utils"
    base.mkdir(parents=True)
    for directory in (root / "plugins", base):
        (directory / "__init__.py").write_text("")
    for relative, text in modules.items():
        path = base / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if not (path.parent / "__init__.py").exists():
            (path.parent / "__init__.py").write_text('"""a package"""\n')
        path.write_text(text)
    return load_tool().module_files(str(root))


def test_two_packages_importing_each_other_are_one_line_naming_both_and_a_file_on_each_side(tmp_path):
    # no cycle of modules (a -> b -> other), but alpha and beta import each other, beta's import lazily
    tool = load_tool()
    files = fake_tree(tmp_path, {
        "alpha/a.py": "from %s.beta import b\n" % PREFIX,
        "alpha/other.py": "VALUE = 1\n",
        "beta/b.py": "def f():\n    from %s.alpha import other\n    return other.VALUE\n" % PREFIX,
        "errors.py": "",
    })
    graph = tool.import_graph(files)
    assert tool.strongly_connected(graph) == []
    assert tool.problems(graph, files, str(tmp_path)) == [
        "package cycle: alpha <-> beta (plugins/module_utils/alpha/a.py imports plugins.module_utils.beta.b; "
        "plugins/module_utils/beta/b.py imports plugins.module_utils.alpha.other)"]


def test_a_longer_package_cycle_is_one_line_with_a_file_per_import(tmp_path):
    tool = load_tool()
    files = fake_tree(tmp_path, {
        "alpha/a.py": "from %s.beta import b\n" % PREFIX,
        "beta/b.py": "from %s import gamma\n" % PREFIX,
        "gamma/__init__.py": "from %s.alpha import z\n" % PREFIX,
        "alpha/z.py": "",
        "errors.py": "",
    })
    graph = tool.import_graph(files)
    assert tool.package_problems(graph, files, str(tmp_path)) == [
        "package cycle: alpha -> beta -> gamma -> alpha (plugins/module_utils/alpha/a.py imports "
        "plugins.module_utils.beta.b; plugins/module_utils/beta/b.py imports plugins.module_utils.gamma; "
        "plugins/module_utils/gamma/__init__.py imports plugins.module_utils.alpha.z)"]


def test_the_package_graph_is_listed_lowest_first_and_refused_with_a_cycle(tmp_path):
    tool = load_tool()
    files = fake_tree(tmp_path, {
        "errors.py": "",
        "low/a.py": "from %s import errors\n" % PREFIX,
        "high/b.py": "from %s.low import a\nfrom %s import errors\n" % (PREFIX, PREFIX),
    })
    graph = tool.import_graph(files)
    assert tool.packages_markdown(graph, files) == (
        "| level | package | imports |\n|---|---|---|\n| 0 | `errors.py` | - |\n| 1 | `low/` | `errors.py` |\n"
        "| 2 | `high/` | `errors.py`, `low/` |\n")
    assert tool.package_levels({"a": {"b": None}, "b": {}, "c": {"a": None, "b": None}}) == {"a": 1, "b": 0, "c": 2}


def test_the_package_graph_is_written_between_the_markers_and_nowhere_without_them(tmp_path):
    tool = load_tool()
    doc = tmp_path / "architecture.md"
    doc.write_text("before\n%s\nold table\n%s\nafter\n" % (tool.DOC_BEGIN, tool.DOC_END))
    assert tool.update_doc(str(doc), "| new |\n")
    assert doc.read_text() == "before\n%s\n| new |\n%s\nafter\n" % (tool.DOC_BEGIN, tool.DOC_END)
    assert tool.embedded_packages(doc.read_text()) == "| new |\n"
    doc.write_text("no markers\n")
    assert not tool.update_doc(str(doc), "| new |\n") and doc.read_text() == "no markers\n"


def test_the_packages_of_module_utils_form_a_dag():
    tool = load_tool()
    files = tool.module_files()
    assert tool.package_problems(tool.import_graph(files), files) == []


def test_the_configuration_package_is_the_floor_and_imports_no_domain():
    # config holds the document, presets and overrides; the domains own their sections' models
    tool = load_tool()
    files = tool.module_files()
    packages = tool.package_graph(tool.import_graph(files))
    root_modules = {package for package in packages if "plugins.module_utils.%s" % package in files
                    and not files["plugins.module_utils.%s" % package].endswith("__init__.py")}
    assert set(packages["config"]) <= root_modules, sorted(set(packages["config"]) - root_modules)


def test_the_architecture_doc_shows_the_package_graph_of_the_code():
    tool = load_tool()
    files = tool.module_files()
    with open(os.path.join(tool.REPO, tool.ARCHITECTURE_DOC), encoding="utf-8") as handle:
        embedded = tool.embedded_packages(handle.read())
    assert embedded == tool.packages_markdown(tool.import_graph(files), files), \
        "docs/architecture.md is out of date: python tools/import_check.py --packages --update-doc"


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
