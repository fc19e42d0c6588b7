"""Every manifest a toolbox role renders validates strictly, offline: with the role's defaults and
with the parameters each shipped preset gives it through config/command_args.yml.j2.

A role's templates (``roles/<role>/templates/*.j2``) are rendered with Ansible's templating (the
collection's filters included) from its defaults, the parameters of each of its command_args entries
under each preset, and ``tests/fixtures/role_templates/<role>.yml``::

    vars: {...}          # what the role learns at run time (facts), and required parameters
    cases:               # more parameter sets worth rendering (optional)
      - {param: value}
    not_manifests: [x.j2]  # templates that are not Kubernetes manifests (optional)

Each document is then checked by the validator that ``render_manifests`` uses before anything is
sent to a cluster.
"""

import glob
import os
import sys

import pytest
import yaml

from ansible_collections.perfscale import topsail


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "role_templates")
ROLES_WITH_TEMPLATES = sorted(os.path.basename(os.path.dirname(os.path.dirname(p)))
                              for p in glob.glob(os.path.join(REPO, "roles", "*", "templates", "*.j2")))
ROLES_WITH_TEMPLATES = sorted(set(ROLES_WITH_TEMPLATES))
# the directory holding ansible_collections/, for the renderer subprocess's collection loader
COLLECTIONS_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(list(topsail.__path__)[0])))


RENDERER = r"""
import json, sys
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
_AnsibleCollectionFinder(paths=[sys.argv[1]])._install()
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

def trusted(value):
    return trust_as_template(value) if isinstance(value, str) and "{{" in value else value

jobs = json.load(sys.stdin)
out = []
for job in jobs:
    templar = Templar(loader=DataLoader(), variables={k: trusted(v) for k, v in job["variables"].items()})
    try:
        out.append({"text": templar.template(trust_as_template(job["template"]))})
    except Exception as exc:
        out.append({"error": "%s: %s" % (type(exc).__name__, " ".join(str(exc).split()))})
json.dump(out, sys.stdout)
"""


def render_all(jobs):
    """Render ``[{template, variables}]`` with Ansible's templating in a fresh interpreter (the
    collection loader resolves the collection's filters there; this process imports the collection
    as a plain package)."""
    import json
    import subprocess

    done = subprocess.run([sys.executable, "-c", RENDERER, COLLECTIONS_ROOT], input=json.dumps(jobs),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def _fixture(role):
    path = os.path.join(FIXTURES, role + ".yml")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle) or {}


def _command_args_cases(role):
    """The role's parameters from every command_args entry, under no preset and each shipped preset."""
    from ansible_collections.perfscale.topsail.plugins.module_utils.toolbox import command_args
    from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config

    config_path = os.path.join(REPO, "config", "config.yaml")
    presets = [None] + sorted(config.resolve_config(config_path).config.get("ci_presets") or {})
    cases = {}
    for preset in presets:
        resolved = config.resolve_config(config_path, presets=preset)
        rendered = command_args.load_command_args(os.path.join(REPO, "config", "command_args.yml.j2"), resolved.config)
        for key, params in rendered.items():
            _prefix, group, command, _suffix = command_args.parse_entry_key(key)
            if "%s_%s" % (group, command) == role:
                label = "%s [%s]" % (key, preset or "no preset")
                cases[label] = {k: v for k, v in (params or {}).items() if v != command_args.PLACEHOLDER}
    return cases


def _cases(role):
    role_dir = os.path.join(REPO, "roles", role)
    with open(os.path.join(role_dir, "defaults", "main.yml"), encoding="utf-8") as handle:
        defaults = yaml.safe_load(handle) or {}
    fixture = _fixture(role)
    base = dict(defaults, **(fixture.get("vars") or {}))
    cases = {"defaults": base}
    for label, params in _command_args_cases(role).items():
        cases[label] = dict(base, **{"%s_%s" % (role, k): v for k, v in params.items()})
    for position, params in enumerate(fixture.get("cases") or []):
        named = {("%s_%s" % (role, k) if not k.startswith(role) else k): v for k, v in params.items()}
        cases["fixture case %d" % position] = dict(base, **named)
    return cases, fixture.get("not_manifests") or []


@pytest.mark.parametrize("role", ROLES_WITH_TEMPLATES)
def test_every_manifest_a_role_renders_validates_strictly(role):
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ManifestValidationError
    from ansible_collections.perfscale.topsail.plugins.module_utils.kube import manifests
    from ansible_collections.perfscale.topsail.plugins.module_utils.kube import validation

    validator = validation.ManifestValidator()
    cases, skipped = _cases(role)
    jobs, labels = [], []
    for template in sorted(glob.glob(os.path.join(REPO, "roles", role, "templates", "*.j2"))):
        if os.path.basename(template) in skipped:
            continue
        with open(template, encoding="utf-8") as handle:
            text = handle.read()
        for label, variables in cases.items():
            jobs.append({"template": text, "variables": variables})
            labels.append("%s/%s (%s)" % (role, os.path.basename(template), label))
    checked = 0
    for where, rendered in zip(labels, render_all(jobs)):
        assert "error" not in rendered, "%s: %s" % (where, rendered.get("error"))
        documents = manifests.load_documents(rendered["text"], where)
        try:
            manifests.check_documents(documents, validator=validator)
        except ManifestValidationError as exc:
            pytest.fail("%s: %s" % (where, exc))
        checked += len(documents)
    assert checked > 0, "%s: no template rendered a Kubernetes object" % role


def test_the_validation_names_the_key_and_the_schema_path():
    """What a user sees when an override put a wrong key into a manifest."""
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ManifestValidationError
    from ansible_collections.perfscale.topsail.plugins.module_utils.kube import manifests

    subscription = {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
                    "metadata": {"name": "nfd", "namespace": "nfd"},
                    "spec": {"name": "nfd", "source": "redhat-operators", "sourceNamespace": "openshift-marketplace",
                             "chanel": "stable"}}
    with pytest.raises(ManifestValidationError) as raised:
        manifests.check_documents([subscription])
    assert str(raised.value).startswith("Subscription nfd: spec.chanel: unknown field (schema ")
    assert "\n" not in str(raised.value)
