#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: capture_environment
short_description: Capture the hardware and software environment of a host
version_added: 0.1.0
description:
  - Reports the CPU model and count, memory, operating system, Python version,
    versions of chosen Python packages, thread-related environment variables and,
    when C(nvidia-smi) is present, the GPU inventory read from C(nvidia-smi -q -x)
    (without it, from C(rocm-smi --showproductname --showmeminfo vram --json)).
  - Every probe degrades on its own; what could not be read is C(null) and is
    listed in RV(environment.warnings).
  - Makes no change to the host.
author:
  - perfscale.topsail developers (@perfscale)
options:
  packages:
    description:
      - Python distribution names whose installed versions are reported
        (C(null) when not installed).
      - When omitted, the collection's default list (the libraries its harnesses and
        post-processing use, such as numpy, torch, pandas and ansible-core).
    type: list
    elements: str
  gpu:
    description:
      - Query C(nvidia-smi) (or C(rocm-smi)) for the GPU inventory when it is on the C(PATH).
    type: bool
    default: true
  nvidia_smi_timeout:
    description:
      - Seconds to wait for each call of C(nvidia-smi) (or C(rocm-smi)) before giving up on the GPU inventory.
    type: int
    default: 30
extends_documentation_fragment:
  - perfscale.topsail.action_attributes.module
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
"""

EXAMPLES = r"""
- name: Capture the environment
  perfscale.topsail.capture_environment:
    packages: [numpy, torch]
  register: env

- name: Show the CPU model
  ansible.builtin.debug:
    msg: "{{ env.environment.cpu.model }} x {{ env.environment.cpu.count }}"
"""

RETURN = r"""
environment:
  description: What was captured.
  returned: always
  type: dict
  contains:
    cpu:
      description: Model, logical count, usable count (affinity), physical cores, architecture, AVX flags.
      type: dict
      returned: always
    memory:
      description: Total and available memory in bytes.
      type: dict
      returned: always
    os:
      description: Distribution id, version, pretty name, kernel, hostname.
      type: dict
      returned: always
    python:
      description: Version, implementation and executable of the interpreter that ran the module.
      type: dict
      returned: always
    packages:
      description: Installed version of each requested package (null when absent).
      type: dict
      returned: always
    threads:
      description: Values of thread-related environment variables (OMP_NUM_THREADS...).
      type: dict
      returned: always
    gpus:
      description:
        - GPUs reported by nvidia-smi or rocm-smi (empty when neither is present; null when the tool
          failed or its document could not be read, with the reason in RV(environment.warnings)).
        - Each has the same keys - C(product_name), C(product_brand), C(product_architecture),
          C(vendor), C(serial), C(uuid), C(pci_bus_id), C(compute_capability), C(driver_version),
          C(cuda_version), C(memory) (C(total_mib), C(used_mib), C(free_mib), C(reserved_mib)),
          C(clocks_mhz) (C(sm), C(sm_max), C(memory), C(memory_max)), C(power) (C(limit_w),
          C(default_limit_w), C(max_limit_w)), C(persistence_mode), C(compute_mode), C(mig)
          (C(enabled), C(pending_enabled), C(devices)), C(ecc) (C(enabled), C(pending_enabled),
          C(errors.volatile), C(errors.aggregate)), C(pcie) (C(generation_current),
          C(generation_max), C(width_current), C(width_max)).
        - Numbers are numbers in the unit their key names; what the tool does not report is null.
      type: list
      elements: dict
      returned: always
    load_average:
      description: 1, 5 and 15 minute load averages.
      type: list
      elements: float
      returned: always
    warnings:
      description: Probes that failed, one line each.
      type: list
      elements: str
      returned: always
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.perfscale.topsail.plugins.module_utils.run.host_environment import (
    DEFAULT_PACKAGES,
    capture_environment,
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            packages=dict(type="list", elements="str"),
            gpu=dict(type="bool", default=True),
            nvidia_smi_timeout=dict(type="int", default=30),
        ),
        supports_check_mode=True,
    )
    environment = capture_environment(
        packages=DEFAULT_PACKAGES if module.params["packages"] is None else module.params["packages"],
        gpu=module.params["gpu"],
        nvidia_smi_timeout=module.params["nvidia_smi_timeout"],
    )
    for warning in environment["warnings"]:
        module.warn(warning)
    module.exit_json(changed=False, environment=environment)


if __name__ == "__main__":
    main()
