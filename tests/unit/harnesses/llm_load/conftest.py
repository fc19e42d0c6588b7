"""Fixtures of the LLM load harness tests: the fake server, the CLI, the report schema."""

import json
import os
import subprocess
import sys

import pytest

TESTS_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
if TESTS_DIR not in sys.path:
    sys.path.insert(0, TESTS_DIR)

FIXTURES = os.path.join(TESTS_DIR, "fixtures", "llm_load")
SCHEMA_PATH = os.path.join(FIXTURES, "br_v0_2_1_json_schema.json")
PACKAGE = "ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load"


def collections_root():
    import ansible_collections  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import

    path = sys.modules["ansible_collections"].__path__
    return os.path.dirname(list(path)[0])


@pytest.fixture
def fake_server():
    """``fake_server(**options)`` starts a FakeOpenAIServer in a thread (stopped after the test)."""
    from fake_openai import FakeServerThread  # pylint: disable=import-outside-toplevel

    started = []

    def start(**options):
        server = FakeServerThread(**options)
        server.__enter__()
        started.append(server)
        return server
    yield start
    for server in started:
        server.__exit__(None, None, None)


def run_cli(args, module=PACKAGE, timeout=60):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([collections_root()] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    return subprocess.run([sys.executable, "-m", module] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, env=env, check=False)


@pytest.fixture(scope="session")
def report_validator():
    import jsonschema  # pylint: disable=import-outside-toplevel

    with open(SCHEMA_PATH, encoding="utf-8") as handle:
        schema = json.load(handle)
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())

    def validate(document):
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
        assert not errors, "; ".join("%s: %s" % (e.json_path, e.message[:160]) for e in errors[:5])
        return document
    return validate
