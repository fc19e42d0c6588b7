# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""AWX / Ansible Automation Platform job templates of the user-facing playbooks, as data.

``job_templates(document, project, inventory, ...)`` returns one entry per playbook in the
option names of ``awx.awx.job_template`` (``playbooks/awx_job_templates.yml`` applies them).
Each has a survey: the preset is a multiple-choice question whose choices come from the
configuration's ``ci_presets`` (a flow's playbook offers its own ``<flow>_*`` presets, the
benchmark playbook the others), "More presets" a multiple-select of what may be applied on top
(``MODIFIER_PRESETS`` - cpt, rehearsal, no_capture, shared_runner - and the playbook's other
presets: resolve_config's ``more_presets``), ``overrides`` takes dotted keys as YAML or JSON, and
``launch_text`` takes a CI comment (``/test job preset...``, ``/var key: value``, ``/only``,
``/skip``), all validated by ``resolve_config`` exactly as ``-e`` is.
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError

TEXT_MAX = 1024
TEXTAREA_MAX = 8192

OVERRIDES_QUESTION = {
    "question_name": "Configuration overrides",
    "question_description": "Dotted keys and their values, as YAML or JSON, e.g. {\"tests.benchmark.timeout_s\": 1200}",
    "variable": "overrides", "type": "textarea", "required": False, "default": "", "min": 0, "max": TEXTAREA_MAX,
}
LAUNCH_TEXT_QUESTION = {
    "question_name": "CI comment",
    "question_description": "Launch arguments as on a pull request: /test <job> <preset>..., /var key: value, "
                            "/only <step>, /skip <step>",
    "variable": "launch_text", "type": "textarea", "required": False, "default": "", "min": 0, "max": TEXTAREA_MAX,
}
RESULTS_DIR_QUESTION = {
    "question_name": "Results directory",
    "question_description": "An artifact tree (a run's directory) on a volume the job can read",
    "variable": "results_dir", "type": "text", "required": True, "default": "", "min": 1, "max": TEXT_MAX,
}


def _preset_question(choices, default):
    return {"question_name": "Preset", "question_description": "The test flavour (ci_presets of the configuration)",
            "variable": "preset", "type": "multiplechoice", "required": True, "choices": list(choices),
            "default": default, "min": None, "max": None}


# presets that adjust a run of any flavour rather than define one: every survey offers them as
# "more presets", besides the playbook's own
MODIFIER_PRESETS = ("cpt", "rehearsal", "no_capture", "shared_runner")


def _more_presets_question(choices):
    """A multiple-select of presets applied after the base one (resolve_config's more_presets)."""
    return {"question_name": "More presets", "question_description": "Applied after the preset, in the "
            "configuration's order: cpt (a regression gate), rehearsal (list the points only), no_capture...",
            "variable": "more_presets", "type": "multiselect", "required": False, "choices": list(choices),
            "default": "", "min": None, "max": None}


# the user-facing playbooks: what each asks at launch; `flow` names a flow whose presets it offers
PLAYBOOKS = {
    "benchmark": {"playbook": "playbooks/benchmark.yml", "presets": "benchmark",
                  "description": "The benchmark matrix on this job's host, KPIs, reports and the regression verdict"},
    "fine_tuning": {"playbook": "playbooks/fine_tuning.yml", "presets": "fine_tuning",
                    "description": "The fine_tuning flow: prepare the cluster, a fine-tuning job per point, cleanup"},
    "llm_serving": {"playbook": "playbooks/llm_serving.yml", "presets": "llm_serving",
                    "description": "The llm_serving flow: deploy, load and undeploy a model per point"},
    "visualize": {"playbook": "playbooks/visualize.yml", "questions": [RESULTS_DIR_QUESTION],
                  "description": "Post-process an artifact tree: KPIs, reports, regression analysis"},
    "export": {"playbook": "playbooks/export.yml", "questions": [RESULTS_DIR_QUESTION],
               "description": "Export an artifact tree's KPIs to the results store"},
    "download": {"playbook": "playbooks/download.yml",
                 "description": "Download a run's artifacts from S3-compatible storage and replot them",
                 "questions": [
                     {"question_name": "Artifacts URL", "question_description": "s3://bucket/prefix of a run "
                      "(its artifacts_url)", "variable": "url", "type": "text", "required": True, "default": "",
                      "min": 6, "max": TEXT_MAX},
                     {"question_name": "Artifact directory", "question_description": "Where the tree goes, on a volume "
                      "the job can write", "variable": "artifact_dir", "type": "text", "required": True, "default": "",
                      "min": 1, "max": TEXT_MAX},
                     {"question_name": "Mode", "question_description": "prefer_cache: the parse caches (and the "
                      "important files of a test without one); important; all", "variable": "mode",
                      "type": "multiplechoice", "required": True, "choices": ["prefer_cache", "important", "all"],
                      "default": "prefer_cache", "min": None, "max": None},
                     # the store's endpoint_url and credentials_file (export_artifacts section)
                     OVERRIDES_QUESTION]},
    "toolbox": {"playbook": "playbooks/toolbox.yml",
                "description": "One toolbox command (the reference's run_toolbox.py group command)",
                "questions": [
                    {"question_name": "Command", "question_description": "'group command', e.g. 'cluster capture_state' "
                     "(list: every command)", "variable": "command", "type": "text", "required": True, "default": "",
                     "min": 1, "max": TEXT_MAX},
                    {"question_name": "Parameters", "question_description": "The command's parameters as YAML or "
                     "JSON (names without the role prefix)", "variable": "params", "type": "textarea",
                     "required": False, "default": "{}", "min": 0, "max": TEXTAREA_MAX},
                    {"question_name": "Cluster", "question_description": "The inventory group of the cluster to reach",
                     "variable": "cluster", "type": "multiplechoice", "required": True, "choices": ["sutest", "driver"],
                     "default": "sutest", "min": None, "max": None}]},
}


def flow_names():
    """The flows that have their own playbook (their presets are theirs)."""
    return sorted(name for name, spec in PLAYBOOKS.items() if spec.get("presets") and spec["presets"] != "benchmark")


def preset_choices(document, playbook):
    """The presets a playbook's survey offers, in the configuration's order: a flow's own
    ``<flow>_*`` presets (the flow's base preset is applied by its playbook), or for the
    benchmark playbook every preset that belongs to no flow."""
    presets = list((document.get(config_lib.PRESETS_SECTION) or {}))
    flows = flow_names()
    owner = PLAYBOOKS[playbook].get("presets")
    if owner == "benchmark":
        return [p for p in presets if p not in flows and not any(p.startswith(f + "_") for f in flows)]
    return [p for p in presets if p.startswith(owner + "_")]


def _default_preset(choices):
    smoke = [c for c in choices if c.endswith("smoke")]
    return (smoke or choices)[0]


def survey_spec(document, playbook):
    spec = PLAYBOOKS[playbook]
    questions = []
    if spec.get("presets"):
        choices = preset_choices(document, playbook)
        if not choices:
            raise ConfigError("awx job template %s: the configuration has no preset for it (ci_presets)" % playbook)
        default = _default_preset(choices)
        presets = list((document.get(config_lib.PRESETS_SECTION) or {}))
        more = [p for p in presets if p in MODIFIER_PRESETS or (p in choices and p != default)]
        questions.append(_preset_question(choices, default))
        if more:
            questions.append(_more_presets_question(more))
        questions += [dict(OVERRIDES_QUESTION), dict(LAUNCH_TEXT_QUESTION)]
    questions += [dict(q) for q in spec.get("questions", ())]
    return {"name": "perfscale.topsail %s" % playbook, "description": spec["description"], "spec": questions}


def job_templates(document, project, inventory, execution_environment=None, organization=None,
                  name_prefix="perfscale", playbooks=None):
    """The job templates (``awx.awx.job_template`` options) of ``playbooks`` (default: all)."""
    if not project or not inventory:
        raise ConfigError("awx job templates: project and inventory are required (names in AWX)")
    selected = list(playbooks or PLAYBOOKS)
    unknown = [p for p in selected if p not in PLAYBOOKS]
    if unknown:
        raise ConfigError("awx job templates: unknown playbook %s; expected some of %s"
                          % (", ".join(unknown), ", ".join(PLAYBOOKS)))
    templates = []
    for playbook in selected:
        template = {
            "name": "%s %s" % (name_prefix, playbook) if name_prefix else playbook,
            "description": PLAYBOOKS[playbook]["description"],
            "job_type": "run",
            "project": project,
            "inventory": inventory,
            "playbook": PLAYBOOKS[playbook]["playbook"],
            "survey_enabled": True,
            "survey_spec": survey_spec(document, playbook),
            "ask_variables_on_launch": True,
            "allow_simultaneous": False,
        }
        if execution_environment:
            template["execution_environment"] = execution_environment
        if organization:
            template["organization"] = organization
        templates.append(template)
    return templates
