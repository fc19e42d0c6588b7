# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for perfscale.topsail.render_manifests (documented in plugins/modules)."""

from __future__ import annotations

import os

from ansible.errors import AnsibleFileNotFound
from ansible.template import trust_as_template

from ansible_collections.perfscale.topsail.plugins.plugin_utils.action import PerfscaleAction
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ManifestValidationError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import manifests

ARGUMENT_SPEC = dict(
    template=dict(type="str"),
    src=dict(type="path"),
    dest=dict(type="str"),
    validate=dict(type="bool", default=True),
    variables=dict(type="dict", default={}),
)


class ActionModule(PerfscaleAction):
    NAME = "render_manifests"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    VALIDATION = dict(mutually_exclusive=[("template", "src")], required_one_of=[("template", "src")])
    NEEDS_CONFIG = False

    def execute(self, result, args, task_vars, config):
        name = args.get("template") or args.get("src")
        try:
            if args.get("template"):
                path = self._find_needle("templates", name)
            elif os.path.isabs(name) or os.path.exists(name):
                path = name
            else:  # a file of the playbook (files/) or of the role
                path = self._find_needle("files", name)
        except AnsibleFileNotFound:
            where = "the role's templates/" if args.get("template") else "the current directory or the playbook's files/"
            raise ManifestValidationError(["manifest %s: not found in %s" % (name, where)]) from None
        try:
            with open(path, encoding="utf-8") as handle:
                source = handle.read()
        except OSError as exc:
            raise ManifestValidationError(["manifest %s: cannot be read: %s" % (name, exc.strerror or exc)]) from None
        # a template (or a file holding Jinja) is rendered with the task's variables, as the
        # template module does (the file's content is trusted as a template)
        templar = self._templar.copy_with_new_env(
            searchpath=[os.path.dirname(path)] + list(task_vars.get("ansible_search_path", [])),
            available_variables=dict(task_vars, **args["variables"]))
        rendered = templar.template(trust_as_template(source), escape_backslashes=False) or ""
        label = os.path.basename(name)
        documents = manifests.load_documents(rendered, label)
        if args["validate"]:
            manifests.check_documents(documents)
        dest_dir = task_vars.get("perfscale_artifact_dir") or task_vars.get("perfscale_run_root")
        dest_name = args.get("dest") or (label[:-3] if label.endswith(".j2") else label)
        written = None
        if dest_dir and not self._task.check_mode:
            written = artifacts.write_text_atomic(os.path.join(dest_dir, "src", dest_name), rendered)
        result.update(changed=False, path=written, objects=documents,
                      resources=[manifests.describe(d) for d in documents],
                      msg="%d object(s) rendered%s: %s" % (
                          len(documents), " and validated" if args["validate"] else "",
                          ", ".join(manifests.describe(d) for d in documents)))
        return result
