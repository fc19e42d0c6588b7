"""A YAML document nested tens of thousands of levels deep is one line, never a dead process.

libyaml's composer (PyYAML's CSafeLoader, which the configuration, the artifact tree's settings and
the matrix plans are read with) recurses on the C stack: 30,000 levels (60 KB) ended the process with
a segmentation fault before ``bounded_input.check_nesting``. Each case runs in a child process, so a
regression is a failed test, not a dead test run.
"""

import os
import subprocess
import sys

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input

COLLECTIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".venv", "collections")

CHILD = """
import sys
sys.path.insert(0, %r)
import yaml
from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading
text = sys.stdin.read()
try:
    if sys.argv[1] == "config":
        loading.parse_yaml_text(text, "overrides.yaml")
    else:
        bounded_input.parse(lambda t: yaml.load(t, Loader=bounded_input.safe_yaml_loader()), text, "settings.yaml")
except Exception as exc:
    print(type(exc).__name__ + ": " + str(exc))
else:
    print("parsed")
"""


def run_child(kind, text):
    return subprocess.run([sys.executable, "-c", CHILD % os.path.abspath(COLLECTIONS), kind], input=text,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("kind", ["config", "tree"])
@pytest.mark.parametrize("text", ["[" * 30000 + "]" * 30000, "{a: " * 30000 + "1" + "}" * 30000, "- " * 30000 + "x\n"],
                         ids=["flow sequences", "flow mappings", "block sequences"])
def test_a_document_thirty_thousand_levels_deep_is_one_line(kind, text):
    answer = run_child(kind, text)
    assert answer.returncode == 0, answer.stderr[-500:]
    assert answer.stdout.strip().endswith("nested too deeply to read; expected at most 64 levels"), answer.stdout


def test_documents_within_the_limit_are_read_as_before():
    nested = "a:\n" + "".join(" " * (i + 1) + "k%d:\n" % i for i in range(60)) + " " * 61 + "x: 1\n"
    bounded_input.check_nesting(nested, "doc")
    many_flows = "a: [1, 2]\nb: {c: [3, 4]}\n" * 100
    bounded_input.check_nesting(many_flows, "doc")
    bounded_input.check_nesting(b"[" * 500 + b"]" * 500, "doc")
    with pytest.raises(bounded_input.InputError, match=r"^doc: nested too deeply to read; expected at most 64 levels$"):
        bounded_input.check_nesting(b"[" * 501 + b"]" * 501, "doc")
    # past 64 levels and within 500, the parser builds it and check_tree names the key
    with pytest.raises(bounded_input.InputError, match=r"^doc: key 0.0.0.0.0.0.0.0...: nested deeper than 64 levels"):
        bounded_input.parse(lambda t: __import__("yaml").safe_load(t), "[" * 70 + "]" * 70, "doc")
    # text libyaml cannot read is left to the parser (which says what is wrong with it)
    bounded_input.check_nesting("a: b: c\n" + "[" * 700 + "]" * 700, "doc")
