"""What the documentation shows works when copied: configuration keys exist, links resolve."""

import glob
import os
import re

import pytest
import yaml

from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config

from test_plugin_contracts import REPO, doc_strings, plugin_files

SECTIONS = ("tests", "postprocess", "export", "regression", "secrets", "clusters")
DOTTED_KEY = re.compile(r"\b((?:%s)(?:\.[A-Za-z0-9_]+)+)\b" % "|".join(SECTIONS))


def shipped_config():
    return config.resolve_config(os.path.join(REPO, "config", "config.yaml")).config


def example_keys():
    for path in plugin_files("modules") + plugin_files("lookup") + plugin_files("filter"):
        examples = doc_strings(path).get("EXAMPLES") or ""
        for line in examples.splitlines():
            if "default=" in line:
                continue  # an example of reading a key that may not exist
            for key in DOTTED_KEY.findall(line):
                yield os.path.basename(path), key


@pytest.mark.parametrize("plugin,key", sorted(set(example_keys())))
def test_every_configuration_key_in_an_example_exists(plugin, key):
    assert config.get_dotted(shipped_config(), key, default=KeyError) is not KeyError, \
        "%s: its EXAMPLES use %s, which the shipped configuration does not have" % (plugin, key)


def markdown_files():
    return [os.path.join(REPO, "README.md")] + sorted(glob.glob(os.path.join(REPO, "docs", "*.md"))) + \
        sorted(glob.glob(os.path.join(REPO, "benchmarks", "*.md")))


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: os.path.relpath(p, REPO))
def test_relative_links_resolve(path):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    for target in LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert os.path.exists(os.path.normpath(os.path.join(os.path.dirname(path), target))), \
            "%s links to %s, which does not exist" % (os.path.relpath(path, REPO), target)


def test_files_named_in_the_configuration_comments_exist():
    for path in (os.path.join(REPO, "config", "config.yaml"), os.path.join(REPO, "config", "command_args.yml.j2")):
        with open(path, encoding="utf-8") as handle:
            for name in re.findall(r"\b(docs/[A-Za-z0-9_.-]+\.md)", handle.read()):
                assert os.path.exists(os.path.join(REPO, name)), "%s names %s" % (path, name)


def test_shipped_config_has_the_renamed_section_only():
    document = yaml.safe_load(open(os.path.join(REPO, "config", "config.yaml")))
    assert "postprocess" in document and "matbench" not in document
