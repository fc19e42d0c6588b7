#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: awx_job_templates
short_description: The AWX/AAP job templates of this collection's playbooks, as data
version_added: 0.2.0
description:
  - Returns one job template per user-facing playbook (benchmark, fine_tuning, llm_serving, visualize,
    export, toolbox), in the option names of C(awx.awx.job_template), each with a survey.
  - The survey of benchmark and of each flow asks for the preset as a multiple-choice list built from the
    configuration's C(ci_presets) (a flow offers its own C(<flow>_*) presets, benchmark the others), for
    C(overrides) (dotted keys as YAML or JSON) and for C(launch_text) (a CI comment - C(/test), C(/var),
    C(/only), C(/skip)); visualize and export ask for C(results_dir); toolbox for C(command), C(args)
    and C(cluster). The answers reach the playbooks as extra variables, validated as C(-e) is.
  - C(playbooks/awx_job_templates.yml) applies them with C(awx.awx.job_template).
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  project:
    description: The AWX project (a checkout of this collection's repository) the templates use.
    type: str
    required: true
  inventory:
    description: The AWX inventory (with C(sutest) and C(driver) groups for the cluster playbooks).
    type: str
    required: true
  execution_environment:
    description: The execution environment holding this collection (built from C(execution-environment/)).
    type: str
  organization:
    description: The organization of the templates.
    type: str
  name_prefix:
    description: Prefix of the templates' names (C(perfscale benchmark), ...).
    type: str
    default: perfscale
  playbooks:
    description: Only these playbooks' templates (default all).
    type: list
    elements: str
  config_file:
    description: The configuration whose presets the surveys offer (default the collection's C(config/config.yaml)).
    type: path
  dest:
    description: Also write the templates to this YAML file (not in check mode).
    type: path
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  action:
    support: full
"""

EXAMPLES = r"""
- name: The job templates, for a project and an inventory of the controller
  perfscale.topsail.awx_job_templates:
    project: perfscale-topsail
    inventory: gpu-cluster
    execution_environment: perfscale-topsail-ee
  register: templates
"""

RETURN = r"""
job_templates:
  description: The job templates, in the option names of awx.awx.job_template (survey_spec included).
  returned: always
  type: list
  elements: dict
config_file:
  description: The configuration the preset choices come from.
  returned: always
  type: str
dest:
  description: The file the templates were written to.
  returned: when dest is set
  type: str
"""
