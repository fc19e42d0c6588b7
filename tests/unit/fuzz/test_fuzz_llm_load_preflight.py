"""Fuzz: a model server's refusal of the preflight request, as any bytes or any JSON close to what
FastAPI, pydantic, OpenAI, vLLM and TGI send. The preflight reads it and answers with the fields to
drop (only fields the harness added, only fields it sent) or one line - never a traceback."""

import json
import os
import sys

from hypothesis import given, strategies as st

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_strategies import JSON  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import preflight  # noqa: E402

FIELDS = ["model", "prompt", "messages", "max_tokens", "stream", "stream_options", "ignore_eos", "temperature", "top_k"]
ORIGINS = st.fixed_dictionaries({}, optional={field: st.sampled_from([preflight.HARNESS, preflight.IGNORE_EOS,
                                                                      preflight.EXTRA_BODY, preflight.REQUEST])
                                              for field in FIELDS})
NAMES = st.sampled_from(FIELDS) | st.text(max_size=12)
LOC = st.lists(st.one_of(st.sampled_from(["body", "query"]), NAMES, st.integers()), max_size=4)
ENTRY = st.one_of(JSON, st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["extra_forbidden", "missing"]) | JSON, "loc": LOC | JSON, "msg": st.text(max_size=40) | JSON}))
WORDS = st.lists(st.sampled_from(["Unexpected fields in the request:", "Unrecognized request argument supplied:",
                                  "Extra inputs are not permitted", "unknown field", "{'", "'}", ", ",
                                  "max_tokens must be", "ignore_eos", "stream_options", "temperature", "prompt"])
                 | st.text(max_size=10), max_size=8).map("".join)
DOCUMENTS = st.one_of(
    st.fixed_dictionaries({"detail": st.one_of(WORDS, st.lists(ENTRY, max_size=60), JSON)}),
    st.fixed_dictionaries({"error": st.one_of(WORDS, JSON, st.fixed_dictionaries(
        {}, optional={"message": WORDS | JSON, "param": NAMES | JSON}))}),
    st.fixed_dictionaries({"object": st.just("error"), "message": WORDS | JSON}),
    JSON,
)
BODIES = st.one_of(DOCUMENTS.map(lambda d: json.dumps(d).encode()), st.binary(max_size=300), WORDS.map(str.encode),
                   st.integers(min_value=0, max_value=40000).map(lambda n: b"[" * n))


def one_line(text):
    assert text and "\n" not in text and "\r" not in text, repr(text)


@given(body=BODIES, origins=ORIGINS, mode=st.sampled_from(preflight.IGNORE_EOS_MODES), status=st.integers(400, 499))
def test_a_refusal_is_fields_to_drop_or_one_line(body, origins, mode, status):
    message = preflight.server_message(body)
    assert message is None or (len(message) <= preflight.MAX_MESSAGE and "\n" not in message)
    fields = preflight.rejected_fields(body, origins)
    assert set(fields) <= set(origins) and fields == sorted(set(fields))
    try:
        dropped = preflight.decide(status, body, origins, mode, "http://h:1")
    except preflight.PreflightRefused as exc:
        one_line(str(exc))
        assert str(exc).startswith("http://h:1: HTTP %d: " % status)
    else:
        assert dropped == fields and dropped
        assert all(origins[field] == preflight.HARNESS or (origins[field] == preflight.IGNORE_EOS and mode != "true")
                   for field in dropped)
