#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: resolve_config
short_description: Resolve the configuration document, its presets and overrides
version_added: 0.1.0
description:
  - Loads the configuration document, applies the chosen presets (in order, with
    their C(extends)), then the overrides, and sets the effective configuration as
    the fact C(perfscale_config).
  - Writes the effective configuration to C(config.yaml) and the applied presets
    to C(presets_applied) in the run's artifact directory. When anything is wrong
    (unknown preset, cycle in C(extends), a key the document does not have, a
    malformed document) the task fails with a one-line message and nothing is written.
  - Every option falls back to the extra-var of the same role (C(config_file),
    C(preset), C(overrides), C(overrides_file), C(artifact_dir)), so a playbook only
    needs C(perfscale.topsail.resolve_config:) with no options.
  - The inventory variables C(perfscale_presets) (list or comma-separated names) and
    C(perfscale_overrides) (mapping of dotted keys), from C(group_vars) or C(host_vars), are
    applied after the document's own values and before O(presets) and O(overrides), which
    win. They are recorded in C(config_inventory.yaml).
  - Every section the collection reads is validated (types, ranges, the names of stores,
    methods, harnesses and executors), the benchmark matrix is planned and the
    post-processing workload loaded, before anything else runs.
  - The section C(matbench) is accepted under its new name C(postprocess) for one release,
    with a warning.
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  config_file:
    description:
      - Configuration document. Defaults to the extra-var C(config_file), then to
        C(config/config.yaml) shipped with the collection.
    type: path
  presets:
    description:
      - Presets to apply, in order, as a list or a comma-separated string.
        Defaults to the extra-var C(preset).
    type: raw
  more_presets:
    description:
      - More presets applied after O(presets), in the order the configuration lists them (an AWX
        survey's multiple-select answer - C(cpt), C(rehearsal), C(no_capture)... - whatever order
        it comes in). Defaults to the extra-var C(more_presets).
    type: raw
  overrides:
    description:
      - Mapping of dotted keys to values, or a JSON/YAML string of one, applied after
        the presets. Defaults to the extra-var C(overrides).
    type: raw
  overrides_file:
    description:
      - YAML file of dotted keys to values, applied after the presets and before
        O(overrides). Defaults to the extra-var C(overrides_file).
    type: path
  artifact_dir:
    description:
      - Run root. Defaults to the extra-var C(artifact_dir), then to the run root
        already resolved in this play, then to C($ARTIFACT_DIR), then to
        C(./artifacts/<YYYYMMDD-HHMMSS>).
    type: path
  write:
    description:
      - Write C(config.yaml) and C(presets_applied) into the run root.
    type: bool
    default: true
  launch_text:
    description:
      - Launch arguments as a CI comment writes them (C(/test <job> <preset>...), C(/var dotted.key - value),
        C(/only <step>), C(/skip <step>); other lines are ignored), for example an AWX survey field.
        Its presets apply after O(presets), its C(/var) keys before O(overrides) (which win), and
        its steps select a test flow's steps. Recorded in C(launch.yaml) of the run root; checked as
        O(presets) and O(overrides) are. Defaults to the extra-var C(launch_text).
    type: str
  launch_file:
    description:
      - A file holding such a text (the extra-var C(launch_file)).
    type: path
  launch_env:
    description:
      - The name of an environment variable holding such a text (the extra-var C(launch_env)).
    type: str
  config_env:
    description:
      - The name of an environment variable holding a resolved configuration as JSON, used instead of
        O(config_file) (presets and overrides apply on top of it). The child playbook of a matrix point
        run by the C(toolbox_flow) harness receives its parent's configuration this way, so that it
        never appears on a command line.
    type: str
    version_added: 0.2.0
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: full
    details: In check mode the configuration is resolved and nothing is written.
  diff_mode:
    support: none
  action:
    support: full
notes:
  - Values of the form C(secret:NAME) are references to files of the secrets
    directory; they are kept as references in C(config.yaml).
"""

EXAMPLES = r"""
- name: Resolve the configuration (presets and overrides from -e)
  perfscale.topsail.resolve_config:

- name: Resolve a given document with two presets
  perfscale.topsail.resolve_config:
    config_file: /path/to/config.yaml
    presets: [cpu_smoke, fast]
    overrides:
      tests.benchmark.timeout_s: 60
"""

RETURN = r"""
config_file:
  description: The configuration document that was read.
  returned: success
  type: str
presets_applied:
  description: Presets in the order they were applied, including those pulled in by C(extends).
  returned: success
  type: list
  elements: str
config:
  description: The effective configuration as shown to people, sensitive values masked (the fact keeps them).
  returned: success
  type: dict
inventory:
  description: The presets and overrides that came from the inventory (C(perfscale_presets), C(perfscale_overrides)).
  returned: success
  type: dict
run_root:
  description: The run's artifact directory.
  returned: success
  type: str
written:
  description: Files written into the run root, by kind.
  returned: success
  type: dict
ansible_facts:
  description: Facts set for the rest of the play.
  returned: success
  type: dict
  contains:
    perfscale_config:
      description: The effective configuration.
      type: dict
    perfscale_run_root:
      description: The run's artifact directory.
      type: str
    perfscale_run_id:
      description:
        - The run's id, from C(run.json) in the run root (made when the run first starts, kept
          when it resumes); exported results carry it, and C(perfscale.topsail.forget) takes it.
        - Null when the run root has none (a tree of an older release, or O(write=false) on a new
          directory).
      type: str
    perfscale_artifact_dir:
      description: The artifact directory currently open (the run root at first).
      type: str
    perfscale_artifact_dir_stack:
      description: Enclosing artifact directories of the current one.
      type: list
      elements: str
    perfscale_presets_applied:
      description: Same as RV(presets_applied).
      type: list
      elements: str
    perfscale_config_file:
      description: Same as RV(config_file).
      type: str
    perfscale_collection:
      description: Version, path, and git commit (in a checkout) of this collection.
      type: dict
"""
