#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: export_artifacts
short_description: Upload a run's artifact tree to S3-compatible storage
version_added: 0.1.0
description:
  - Uploads every file of the run directory to the destination the run recorded when it
    started (C(artifacts_url) of C(run.json)) -
    C(s3://<bucket>/<path_prefix>/<run directory name>-<run id[:8]>/) - as configured in the
    C(export_artifacts) section (C(enabled), C(bucket), C(path_prefix), C(endpoint_url),
    C(credentials_file), C(parallel), C(part_size_mib), C(fail_test_on_fail)).
  - Resumable - the bucket is listed first and a file whose size and checksum (ETag) are
    already there is not sent again. Files larger than C(part_size_mib) go in parts. Every
    request carries the payload's SHA-256 and MD5. The manifest (size, time and SHA-256 of
    every file) is uploaded last; without it the upload is incomplete.
  - The outcome goes to C(artifacts_export.json) in the run directory. A failed upload is a
    warning, unless C(export_artifacts.fail_test_on_fail) is true.
  - Credentials come from the secrets directory (C(export_artifacts.credentials_file), YAML
    with C(access_key_id) and C(secret_access_key)); they never reach the task's output or
    the artifacts.
  - Skipped when C(export_artifacts.enabled) is false. Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  run_root:
    description:
      - The run directory; default the fact C(perfscale_run_root).
    type: path
extends_documentation_fragment:
  - perfscale.topsail.action_attributes
attributes:
  check_mode:
    support: none
  diff_mode:
    support: none
  action:
    support: full
"""

EXAMPLES = r"""
- name: Upload the run's artifacts (export_artifacts section of the configuration)
  perfscale.topsail.export_artifacts:
"""

RETURN = r"""
url:
  description: Where the artifacts are (C(s3://bucket/prefix/run)).
  returned: when enabled
  type: str
summary:
  description:
    - C(files), C(uploaded), C(already_there), C(bytes_uploaded), C(bytes_total), C(failed)
      (one line per file that could not be sent), C(complete), C(seconds).
  returned: when enabled
  type: dict
record:
  description: Path of C(artifacts_export.json).
  returned: when enabled
  type: str
"""
