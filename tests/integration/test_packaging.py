"""The built collection installs into another directory and works there."""

import json
import os
import re
import sqlite3
import subprocess
import tarfile

import pytest
import yaml

from helpers import BIN, REPO


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    work = tmp_path_factory.mktemp("galaxy")
    build = subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--output-path", str(work), REPO],
                           capture_output=True, text=True, check=False, cwd=REPO)
    assert build.returncode == 0, build.stdout + build.stderr
    tarball = next(work.glob("perfscale-topsail-*.tar.gz"))
    collections = work / "collections"
    install = subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--offline", "--no-deps",
                              "--force", "-p", str(collections), str(tarball)],
                             capture_output=True, text=True, check=False, cwd=str(work),
                             env=isolated_env(work, collections))
    assert install.returncode == 0, install.stdout + install.stderr
    return work, tarball, collections


def isolated_env(work, collections):
    cfg = work / "ansible.cfg"
    cfg.write_text("[defaults]\ncallbacks_enabled = perfscale.topsail.toolbox_log\n")
    env = dict(os.environ)
    env.update(ANSIBLE_CONFIG=str(cfg), ANSIBLE_COLLECTIONS_PATH=str(collections), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + env["PATH"])
    env.pop("ARTIFACT_DIR", None)
    return env


def test_tarball_leaves_out_venv_artifacts_and_caches(installed):
    _work, tarball, _collections = installed
    with tarfile.open(tarball) as archive:
        names = archive.getnames()
    assert "galaxy.yml" not in names and "MANIFEST.json" in names
    assert "roles/host_capture_environment/meta/argument_specs.yml" in names
    assert "config/config.yaml" in names
    for name in names:
        assert not name.startswith((".venv", "artifacts", ".git/", ".pytest_cache")), name
        assert "__pycache__" not in name, name


def test_installed_collection_runs_a_playbook_by_fqcn(installed):
    work, _tarball, collections = installed
    run_root = work / "run"
    run = subprocess.run(
        [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",
         "-e", "ansible_python_interpreter={{ ansible_playbook_python }}",
         "perfscale.topsail.benchmark", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % run_root],
        cwd=str(work), env=isolated_env(work, collections), capture_output=True, text=True, check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    installed_root = collections / "ansible_collections" / "perfscale" / "topsail"
    assert (run_root / "config.yaml").exists()
    assert (run_root / "presets_applied").read_text() == "cpu_smoke\n"
    collection = json.loads((run_root / "000__host__capture_environment" / "collection.json").read_text())
    assert collection["path"] == os.path.realpath(installed_root)
    assert collection["version"] == "0.1.0" and collection["git_commit"] is None
    assert (run_root / "000__host__capture_environment" / "_ansible.log").exists()


def test_the_readmes_ansible_cfg_runs_the_installed_collection_without_a_warning(installed, tmp_path):
    """The `ansible.cfg` the README gives for an installed collection, as it is written there: the
    playbook runs on localhost without -i, and prints no warning (no inventory, unmatched host
    pattern, callback not enabled)."""
    _work, _tarball, collections = installed
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    section = readme[readme.index("## Using it as an installed collection"):]
    (tmp_path / "ansible.cfg").write_text(section.split("```ini\n", 1)[1].split("```", 1)[0])
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + os.environ["PATH"], XDG_DATA_HOME=str(tmp_path / "data"))
    for name in ("ANSIBLE_CONFIG", "ARTIFACT_DIR", "ANSIBLE_CALLBACKS_ENABLED", "ANSIBLE_INVENTORY"):
        env.pop(name, None)
    run = subprocess.run([os.path.join(BIN, "ansible-playbook"), "perfscale.topsail.benchmark", "-e",
                          "preset=cpu_smoke,rehearsal", "-e", "artifact_dir=%s" % (tmp_path / "run")],
                         cwd=str(tmp_path), env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "[WARNING]" not in run.stdout + run.stderr, run.stdout + run.stderr


def test_every_action_plugin_has_its_documentation_stub():
    actions = {os.path.splitext(f)[0] for f in os.listdir(os.path.join(REPO, "plugins", "action"))
               if f.endswith(".py") and not f.startswith("__")}
    assert actions <= {name.rsplit(".", 1)[1] for plugin_type, name in PLUGINS if plugin_type == "module"}


def test_ansible_doc_documents_every_role_and_every_parameter(installed):
    work, _tarball, collections = installed
    roles = sorted(d for d in os.listdir(os.path.join(REPO, "roles")) if os.path.isdir(os.path.join(REPO, "roles", d)))
    doc = subprocess.run([os.path.join(BIN, "ansible-doc"), "-t", "role", "--json"]
                         + ["perfscale.topsail.%s" % role for role in roles],
                         env=isolated_env(work, collections), capture_output=True, text=True, check=False)
    assert doc.returncode == 0, doc.stderr
    pages = json.loads(doc.stdout)
    assert sorted(pages) == ["perfscale.topsail.%s" % role for role in roles]
    for role in roles:
        with open(os.path.join(REPO, "roles", role, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
            declared = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
        documented = pages["perfscale.topsail.%s" % role]["entry_points"]["main"]["options"]
        assert sorted(documented) == sorted(declared), role
        assert all(option.get("description") for option in documented.values()), role


def test_a_bare_project_without_our_ansible_cfg_exports_at_play_end(installed, tmp_path):
    """Installed by ansible-galaxy into a project with no ansible.cfg (so no callback
    enabled): the benchmark still exports its KPIs to the results store."""
    _work, _tarball, collections = installed
    project = tmp_path / "project"
    project.mkdir()
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections), ANSIBLE_NOCOLOR="1",
               PATH=BIN + os.pathsep + os.environ["PATH"], XDG_DATA_HOME=str(tmp_path / "data"),
               ANSIBLE_HOME=str(tmp_path / "ansible-home"))
    for variable in ("ANSIBLE_CONFIG", "ANSIBLE_CALLBACKS_ENABLED", "ARTIFACT_DIR", "ANSIBLE_ROLES_PATH"):
        env.pop(variable, None)
    run = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",
                          "-e", "ansible_python_interpreter={{ ansible_playbook_python }}",
                          "perfscale.topsail.benchmark", "-e", "preset=cpu_smoke", "-e", "artifact_dir=run"],
                         cwd=str(project), env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "perfscale.topsail.toolbox_log is not enabled" in run.stdout + run.stderr
    store = tmp_path / "data" / "perfscale-topsail" / "results.sqlite"
    with sqlite3.connect(store) as connection:
        kinds = dict(connection.execute("SELECT kind, COUNT(*) FROM documents GROUP BY kind").fetchall())
    # 5 KPIs and the 5 resource-usage KPIs per point; each point's wall time too (capacity estimates)
    assert kinds == {"kpi": 80, "regression": 16, "point": 8}
    assert run.stdout.count("kpi_export: 80 KPI and 16 regression document(s) exported") == 1


# every plugin of the collection, by type: each must have an ansible-doc page
PLUGIN_DIRS = {"module": "modules", "lookup": "lookup", "callback": "callback", "filter": "filter"}
PLUGINS = sorted((plugin_type, "perfscale.topsail.%s" % os.path.splitext(name)[0])
                 for plugin_type, folder in PLUGIN_DIRS.items()
                 for name in os.listdir(os.path.join(REPO, "plugins", folder))
                 if name.endswith(".py") and not name.startswith("__"))


# the pages of one type come from one ansible-doc run (a process per plugin cost ~30 CPU-seconds
# of the integration step); its text output is one page per plugin, each opening with
# "> MODULE perfscale.topsail.name (path)", and a plugin it cannot find or document has no page
PAGE_HEADER = re.compile(r"^> [A-Z]+ (\S+) \(", re.MULTILINE)


@pytest.fixture(scope="module")
def doc_pages(installed):
    """Plugin type -> (its ansible-doc run, {plugin name: its page})."""
    work, _tarball, collections = installed
    by_type = {}
    for plugin_type in sorted({plugin_type for plugin_type, _name in PLUGINS}):
        names = [name for each_type, name in PLUGINS if each_type == plugin_type]
        doc = subprocess.run([os.path.join(BIN, "ansible-doc"), "-t", plugin_type] + names,
                             env=isolated_env(work, collections), capture_output=True, text=True, check=False)
        headers = list(PAGE_HEADER.finditer(doc.stdout))
        ends = [header.start() for header in headers[1:]] + [len(doc.stdout)]
        by_type[plugin_type] = (doc, {header.group(1): doc.stdout[header.start():end] for header, end in zip(headers, ends)})
    return by_type


@pytest.mark.parametrize("plugin_type,name", PLUGINS)
def test_ansible_doc_shows_each_plugin(doc_pages, plugin_type, name):
    doc, pages = doc_pages[plugin_type]
    assert doc.returncode == 0, doc.stderr
    assert name not in doc.stderr, doc.stderr
    page = pages.get(name)
    assert page is not None, "no ansible-doc page for %s %s:\n%s" % (plugin_type, name, doc.stderr)
    assert "EXAMPLES" in page or plugin_type == "callback"
