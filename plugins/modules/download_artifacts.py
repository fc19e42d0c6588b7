#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: download_artifacts
short_description: Download a run's artifacts from S3-compatible storage, all or what the plots need
version_added: 0.1.0
description:
  - Reads the manifest M(perfscale.topsail.export_artifacts) uploaded last (no manifest - the
    upload did not finish - is an error), then downloads the files O(mode) selects into
    O(artifact_dir). Each file is checked against the manifest's SHA-256 and gets its original
    modification time; it is written under a temporary name and renamed, so it is there whole
    or not at all. A second run resumes (files already there are not fetched again).
  - O(artifact_dir) must be new, empty, or an earlier download of the same URL.
  - The store's endpoint and credentials come from the C(export_artifacts) section
    (C(endpoint_url), C(credentials_file), C(region), C(parallel)).
  - Runs on the controller (action plugin).
author:
  - perfscale.topsail developers (@perfscale)
options:
  url:
    description:
      - C(s3://bucket/prefix) of a run (its C(artifacts_url)).
    type: str
  url_file:
    description:
      - A file whose first line is the URL.
    type: path
  artifact_dir:
    description:
      - Where the run's tree is written.
    type: path
    required: true
  mode:
    description:
      - V(prefer_cache) - the run's own files, every C(settings.yaml), each test's
        C(exit_code) and C(.uuid), and the parse caches; a test whose cache is missing or
        stale (another workload code, or a file it read that changed) gets its important
        files instead. The files left in the bucket are recorded in
        C(.perfscale_download.json), so the caches stay fresh for the post-processing.
      - V(important) - the same skeleton and the workload's important files of every test.
      - V(all) - every file.
    type: str
    choices: [all, important, prefer_cache]
    default: prefer_cache
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
- name: Download what the plots need
  perfscale.topsail.download_artifacts:
    url: s3://results/perfscale/20261120-101500-3f2a9c1d
    artifact_dir: /tmp/replot
"""

RETURN = r"""
summary:
  description:
    - C(files), C(downloaded), C(bytes_downloaded), C(bytes_total), C(already_there),
      C(left_remote), C(notes), C(seconds), C(mode), C(url).
  returned: success
  type: dict
artifact_dir:
  description: The absolute path of the downloaded tree.
  returned: success
  type: str
"""
