"""AWX / AAP: the playbooks run the way AWX runs them (ansible-runner: a private data directory,
survey answers as extra variables, an inventory with sutest/driver groups, job events), the job
templates' surveys come from the configuration's presets and use only options awx.awx.job_template
has, and the execution environment's build context is written offline by ansible-builder."""

import glob
import json
import os
import sqlite3
import subprocess
import sys

import pytest
import yaml

from helpers import REPO, run_playbook

from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import awx
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib

BIN = os.path.dirname(sys.executable)


def _private_data_dir(tmp_path, extravars):
    """What AWX's job runner hands ansible-runner: inventory, extra vars (the survey's answers)."""
    private = tmp_path / "private"
    (private / "inventory").mkdir(parents=True)
    (private / "env").mkdir()
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    (private / "inventory" / "hosts.yml").write_text(yaml.safe_dump({"all": {
        "hosts": {"localhost": local},
        "children": {"sutest": {"hosts": {"localhost": None}}, "driver": {"hosts": {"localhost": None}}}}}))
    (private / "env" / "extravars").write_text(yaml.safe_dump(extravars))
    return private


def test_the_benchmark_job_template_runs_through_ansible_runner_and_exports(tmp_path):
    import ansible_runner

    store = tmp_path / "store.sqlite"
    # the survey's answers, as AWX sends them: strings, empty when not filled in
    answers = {"preset": "cpu_smoke", "launch_text": "",
               "overrides": json.dumps({"tests.benchmark.matrix.factors.size": [64],
                                        "tests.benchmark.matrix.include": [],
                                        "tests.benchmark.matrix.common_settings.reps": 3,
                                        "tests.capture_environment.enabled": False,
                                        "export.sqlite.path": str(store)}),
               "artifact_dir": str(tmp_path / "artifacts")}
    private = _private_data_dir(tmp_path, answers)
    env = {"PATH": BIN + os.pathsep + os.environ["PATH"], "ANSIBLE_CONFIG": os.path.join(REPO, "ansible.cfg"),
           "XDG_DATA_HOME": str(tmp_path / "data")}
    result = ansible_runner.run(private_data_dir=str(private), project_dir=REPO, playbook="playbooks/benchmark.yml",
                                envvars=env, quiet=True, ident="job-1", timeout=600)
    stdout = result.stdout.read()
    assert (result.status, result.rc) == ("successful", 0), stdout[-3000:]

    # what AWX shows: the job's events, its stdout and the play recap
    events = list(result.events)
    assert any(e["event"] == "playbook_on_stats" for e in events)
    assert any(e["event"] == "runner_on_ok" and e["event_data"].get("task") == "Run the benchmark matrix"
               for e in events), sorted({e["event_data"].get("task") for e in events if "event_data" in e})[:40]
    assert os.path.isfile(private / "artifacts" / "job-1" / "rc")

    # the run itself: the matrix of the survey's preset and overrides, and the play-end export
    points = glob.glob(str(tmp_path / "artifacts" / "*__matbenchmarking" / "0*__*"))
    assert sorted(os.path.basename(p).split("__", 1)[1] for p in points) == ["matmul_float32_64", "matmul_float64_64"]
    assert "kpi_export:" in stdout and "exported to sqlite %s" % store in " ".join(stdout.split())
    with sqlite3.connect(str(store)) as connection:
        (kpis,) = connection.execute("SELECT COUNT(*) FROM documents WHERE kind = 'kpi'").fetchone()
    assert kpis >= 2


def test_a_wrong_survey_answer_fails_the_job_with_one_line(tmp_path):
    import ansible_runner

    private = _private_data_dir(tmp_path, {"preset": "cpu_smokee", "overrides": "", "launch_text": "",
                                           "artifact_dir": str(tmp_path / "artifacts")})
    result = ansible_runner.run(private_data_dir=str(private), project_dir=REPO, playbook="playbooks/benchmark.yml",
                                envvars={"ANSIBLE_CONFIG": os.path.join(REPO, "ansible.cfg"),
                                         "PATH": BIN + os.pathsep + os.environ["PATH"]},
                                quiet=True, ident="job-2", timeout=300)
    assert result.status == "failed"
    failed = [e for e in result.events if e["event"] == "runner_on_failed"]
    assert len(failed) == 1
    assert "unknown preset 'cpu_smokee' (did you mean 'cpu_smoke'?)" in failed[0]["event_data"]["res"]["msg"]


def test_a_survey_combines_a_base_preset_with_more_presets(tmp_path):
    import ansible_runner

    # AWX sends a multiple-select answer as a list, in any order: applied in the configuration's
    private = _private_data_dir(tmp_path, {"preset": "cpu_smoke", "more_presets": ["no_capture", "rehearsal"],
                                           "overrides": "", "launch_text": "", "artifact_dir": str(tmp_path / "run")})
    result = ansible_runner.run(private_data_dir=str(private), project_dir=REPO, playbook="playbooks/benchmark.yml",
                                envvars={"ANSIBLE_CONFIG": os.path.join(REPO, "ansible.cfg"),
                                         "PATH": BIN + os.pathsep + os.environ["PATH"],
                                         "XDG_DATA_HOME": str(tmp_path / "data")},
                                quiet=True, ident="job-3", timeout=300)
    assert (result.status, result.rc) == ("successful", 0), result.stdout.read()[-3000:]
    assert (tmp_path / "run" / "presets_applied").read_text() == "cpu_smoke\nrehearsal\nno_capture\n"
    assert not glob.glob(str(tmp_path / "run" / "*__host__capture_environment"))   # no_capture
    assert not glob.glob(str(tmp_path / "run" / "*__matbenchmarking" / "0*__*" / "output.json"))  # a rehearsal
    # the survey offers them: the modifiers and the playbook's other presets, never a flow's
    survey = {t["name"]: t for t in awx.job_templates(_document(), "p", "i")}
    questions = {q["variable"]: q for q in survey["perfscale llm_serving"]["survey_spec"]["spec"]}
    assert questions["more_presets"]["type"] == "multiselect" and not questions["more_presets"]["required"]
    assert {"cpt", "rehearsal", "no_capture", "llm_serving_prometheus"} <= set(questions["more_presets"]["choices"])
    assert not any(c.startswith("fine_tuning") for c in questions["more_presets"]["choices"])


def _document():
    return config_lib.load_config_document(os.path.join(REPO, "config", "config.yaml"))


def test_surveys_offer_the_configurations_presets_by_playbook():
    document = _document()
    presets = list(document["ci_presets"])
    benchmark = awx.preset_choices(document, "benchmark")
    fine_tuning = awx.preset_choices(document, "fine_tuning")
    serving = awx.preset_choices(document, "llm_serving")
    assert "cpu_smoke" in benchmark and "fine_tuning_smoke" not in benchmark and "fine_tuning" not in benchmark
    assert fine_tuning == [p for p in presets if p.startswith("fine_tuning_")] and "fine_tuning_smoke" in fine_tuning
    assert serving == [p for p in presets if p.startswith("llm_serving_")]
    assert sorted(benchmark + fine_tuning + serving + ["fine_tuning", "llm_serving"]) == sorted(presets)
    templates = {t["name"]: t for t in awx.job_templates(document, "proj", "inv", execution_environment="ee")}
    assert sorted(templates) == ["perfscale %s" % p for p in sorted(awx.PLAYBOOKS)]
    question = templates["perfscale fine_tuning"]["survey_spec"]["spec"][0]
    assert question["variable"] == "preset" and question["choices"] == fine_tuning
    assert question["default"] == "fine_tuning_smoke"
    assert templates["perfscale benchmark"]["survey_spec"]["spec"][0]["default"] == "cpu_smoke"
    for template in templates.values():
        assert os.path.isfile(os.path.join(REPO, template["playbook"])), template["playbook"]


def test_job_templates_use_only_options_of_awx_job_template_and_its_survey_types():
    """awx.awx.job_template's own documentation (ansible-doc) is the schema: every option a
    template sets exists there, with a value of its type and choices; survey questions have
    the types and fields the controller's survey validation accepts."""
    doc = json.loads(subprocess.run([os.path.join(BIN, "ansible-doc"), "-j", "awx.awx.job_template"], check=True,
                                    capture_output=True, text=True, cwd=REPO).stdout)
    options = doc["awx.awx.job_template"]["doc"]["options"]
    types = {"str": str, "bool": bool, "dict": dict, "list": list, "json": dict, "raw": object}
    for template in awx.job_templates(_document(), "proj", "inv", execution_environment="ee", organization="Default"):
        for key, value in template.items():
            assert key in options, key
            assert isinstance(value, types.get(options[key].get("type", "str"), object)), (key, value)
            if options[key].get("choices"):
                assert value in options[key]["choices"], (key, value)
        for question in template["survey_spec"]["spec"]:
            assert question["type"] in ("text", "textarea", "password", "integer", "float", "multiplechoice",
                                        "multiselect")
            assert set(question) >= {"question_name", "variable", "type", "required", "default"}
            if question["type"] == "multiplechoice":
                assert question["choices"] and question["default"] in question["choices"]


def test_the_templates_playbook_builds_them_without_a_controller_and_refuses_missing_names(tmp_path):
    dest = tmp_path / "templates.yml"
    run = run_playbook("playbooks/awx_job_templates.yml", "-e", "awx_project=perfscale-topsail",
                       "-e", "awx_inventory=gpu-cluster", "-e", "awx_apply=false", "-e", "awx_dest=%s" % dest)
    assert run.returncode == 0, run.output
    assert "[WARNING]" not in run.output, run.output  # no template error of the skipped controller task
    written = yaml.safe_load(dest.read_text())["job_templates"]
    assert [t["name"] for t in written] == ["perfscale %s" % p for p in awx.PLAYBOOKS]
    assert all(t["project"] == "perfscale-topsail" and t["inventory"] == "gpu-cluster" for t in written)
    missing = run_playbook("playbooks/awx_job_templates.yml", "-e", "awx_apply=false")
    assert missing.returncode != 0
    assert "awx_job_templates: expected -e awx_project=NAME -e awx_inventory=NAME" in missing.flat


@pytest.mark.parametrize("playbooks, message", [(["benchmark", "nope"], "unknown playbook nope")])
def test_an_unknown_playbook_is_one_line(playbooks, message):
    with pytest.raises(Exception, match=message):
        awx.job_templates(_document(), "p", "i", playbooks=playbooks)


def _installed_collection(tmp_path):
    """The collection as the execution environment's image holds it: its tarball installed."""
    done = subprocess.run(["make", "-s", "ee-context", "EE_CONTEXT=%s" % (tmp_path / "context")], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    collections = tmp_path / "collections"
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--force", "--no-deps", "-p", str(collections),
                    os.path.join(REPO, "build", "perfscale-topsail.tar.gz")], check=True, capture_output=True, cwd=str(tmp_path))
    return tmp_path / "context", collections


def test_the_execution_environment_build_context_is_written_offline(tmp_path):
    context, collections = _installed_collection(tmp_path)
    containerfile = (context / "Containerfile").read_text()
    ee = yaml.safe_load(open(os.path.join(REPO, "execution-environment", "execution-environment.yml")))
    assert 'ARG EE_BASE_IMAGE="%s"' % ee["images"]["base_image"]["name"] in containerfile
    assert "ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml" in containerfile
    assert 'ARG ANSIBLE_GALAXY_CLI_COLLECTION_OPTS="--no-deps"' in containerfile
    assert "ENV PERFSCALE_EE_COLLECTION=/usr/share/ansible/collections/ansible_collections/perfscale/topsail" in containerfile
    # the pins of `make setup`, and the collection of this checkout
    assert (context / "_build" / "requirements.txt").read_text() == open(os.path.join(REPO, "requirements.txt")).read()
    assert yaml.safe_load((context / "_build" / "requirements.yml").read_text())["collections"][0]["type"] == "file"
    installed = collections / "ansible_collections" / "perfscale" / "topsail"
    manifest = json.loads((installed / "MANIFEST.json").read_text())["collection_info"]
    galaxy = yaml.safe_load(open(os.path.join(REPO, "galaxy.yml")))
    assert (manifest["namespace"], manifest["name"], manifest["version"]) == ("perfscale", "topsail", galaxy["version"])
    assert (installed / "plugins" / "module_utils" / "executors" / "pod_point.py").is_file()
    # what ansible-builder gathers from the installed collection at build time (introspection)
    introspected = subprocess.run([os.path.join(BIN, "ansible-builder"), "introspect", str(collections)],
                                  capture_output=True, text=True, check=True).stdout
    python = yaml.safe_load(introspected)["python"]
    for package in ("pydantic", "pandas", "plotly", "scipy", "opensearch-py", "kubernetes-validate"):
        assert any(line.startswith(package) and line.endswith("# from collection perfscale.topsail") for line in python), \
            (package, python)
