"""The preflight decides before the load starts: a server that refuses a field the harness adds
(``ignore_eos``, ``stream_options``) gets requests without it (ignore_eos auto), or the run stops
at once naming the field and the setting; what the server said is read from any kind of answer."""

import json

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import base as harness_base
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import (
    client,
    preflight,
    prompts,
    runner,
)
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import ConfigError, Stage
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.distributions import parse_length
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.metrics import StageSummary

from conftest import run_cli

# what a strict OpenAI-compatible server knows (transformers serve refuses anything else with 422)
OPENAI_FIELDS = ("model", "prompt", "messages", "max_tokens", "stream", "stream_options", "temperature")
TRANSFORMERS_422 = b'{"detail":"Unexpected fields in the request: {\'ignore_eos\'}"}'
SENT = {"model": preflight.REQUEST, "prompt": preflight.REQUEST, "max_tokens": preflight.REQUEST,
        "stream": preflight.REQUEST, "stream_options": preflight.HARNESS, "ignore_eos": preflight.IGNORE_EOS,
        "temperature": preflight.EXTRA_BODY}


# --------------------------------------------------------------------------
# the server's words


@pytest.mark.parametrize("body,message", [
    (TRANSFORMERS_422, "Unexpected fields in the request: {'ignore_eos'}"),
    (json.dumps({"detail": [{"type": "extra_forbidden", "loc": ["body", "ignore_eos"], "input": True,
                             "msg": "Extra inputs are not permitted"},
                            {"loc": ["body", "stream_options"], "msg": "Extra inputs are not permitted"},
                            "not an entry"]}).encode(),
     "body.ignore_eos: Extra inputs are not permitted; body.stream_options: Extra inputs are not permitted"),
    (b'{"error": {"message": "Unrecognized request argument supplied: ignore_eos", "param": "ignore_eos"}}',
     "Unrecognized request argument supplied: ignore_eos"),
    (b'{"error": {"message": ["max_tokens too large", "no"]}}', "max_tokens too large; no"),
    (b'{"object": "error", "message": "The model `x` does not exist.", "type": "NotFoundError", "code": 404}',
     "The model `x` does not exist."),
    (b'{"error": "Input validation error: `inputs` must be non-empty", "error_type": "validation"}',
     "Input validation error: `inputs` must be non-empty"),
    (b"<html>\r\n<h1>Bad   Gateway</h1>\n</html>", "<html> <h1>Bad Gateway</h1> </html>"),
    (b'{"detail": []}', '{"detail": []}'),
    (b"", None),
    (b"\xff\xfe not utf-8", "\ufffd\ufffd not utf-8"),
    ("[" * 100000 + "]" * 100000, "[" * 300),
])
def test_the_servers_message_is_one_bounded_line(body, message):
    assert preflight.server_message(body) == message


def test_a_huge_answer_is_read_up_to_its_bound_only():
    body = b'{"detail": "' + b"x" * 10 ** 7 + b'"}'
    message = preflight.server_message(body)
    assert message == "{\"detail\": \"" + "x" * 288 and len(message) == preflight.MAX_MESSAGE


@pytest.mark.parametrize("body,fields", [
    (TRANSFORMERS_422, ["ignore_eos"]),
    (b'{"detail":"Unexpected fields in the request: {\'foo\', \'ignore_eos\'}"}', ["ignore_eos"]),   # foo was not sent
    (json.dumps({"detail": [{"type": "extra_forbidden", "loc": ["body", "ignore_eos"],
                             "msg": "Extra inputs are not permitted"},
                            {"type": "extra_forbidden", "loc": ["body", "stream_options"], "msg": "x"},
                            {"type": "missing", "loc": ["body", "messages"], "msg": "Field required"},
                            {"type": "int_parsing", "loc": ["query", "temperature"],
                             "msg": "not permitted"}]}).encode(),
     ["ignore_eos", "stream_options"]),
    (b'{"error": {"message": "Unrecognized request argument supplied: stream_options", "param": null}}',
     ["stream_options"]),
    (b'{"error": {"message": "bad", "param": "stream_options.include_usage"}}', ["stream_options"]),
    (b'{"object": "error", "message": "extra fields not permitted: ignore_eos"}', ["ignore_eos"]),
    (b'{"error": "unknown field `ignore_eos`"}', ["ignore_eos"]),
    (b"unsupported parameter: temperature", ["temperature"]),
    (b'{"detail": "max_tokens must be at least 1"}', []),               # no word of refusal: another reason
    (b'{"detail": "Unexpected fields: {\'xignore_eos\', \'ignore_eos_x\'}"}', []),     # whole names only
    (b'{"detail": 3}', []),
    (b"", []),
])
def test_the_refused_fields_are_read_from_every_kind_of_answer(body, fields):
    assert preflight.rejected_fields(body, SENT) == fields


WHERE = "http://h:1 (/v1/completions)"


@pytest.mark.parametrize("mode", ["auto", "false"])
def test_decide_drops_the_fields_the_harness_added_on_its_own(mode):
    body = b'{"detail":"Unexpected fields in the request: {\'ignore_eos\', \'stream_options\'}"}'
    assert preflight.decide(422, body, SENT, mode, WHERE) == ["ignore_eos", "stream_options"]


def test_decide_stops_when_ignore_eos_true_was_asked_for():
    with pytest.raises(preflight.PreflightRefused) as caught:
        preflight.decide(422, TRANSFORMERS_422, SENT, "true", WHERE)
    assert str(caught.value) == (
        "http://h:1 (/v1/completions): HTTP 422: the server does not accept the field ignore_eos, which "
        "ignore_eos: true (--ignore-eos true) sends; use ignore_eos: auto (drop it when refused) or false: "
        "Unexpected fields in the request: {'ignore_eos'}")


def test_decide_stops_on_a_refused_field_of_extra_body():
    with pytest.raises(preflight.PreflightRefused) as caught:
        preflight.decide(400, b'{"error": {"message": "unsupported", "param": "temperature"}}', SENT, "auto", WHERE)
    assert str(caught.value) == ("http://h:1 (/v1/completions): HTTP 400: the server does not accept the field "
                                 "temperature of extra_body (--extra-body): unsupported")


def test_decide_stops_on_a_refused_field_of_the_request_itself():
    with pytest.raises(preflight.PreflightRefused) as caught:
        preflight.decide(422, b'{"detail": "Unexpected fields in the request: {\'prompt\'}"}', SENT, "auto", WHERE)
    assert str(caught.value) == ("http://h:1 (/v1/completions): HTTP 422: the server refused the field prompt of the "
                                 "request: Unexpected fields in the request: {'prompt'}")


@pytest.mark.parametrize("body,said", [(b'{"detail": "Server is pinned to \'m\'; requested \'x\'."}',
                                        ": Server is pinned to 'm'; requested 'x'."), (b"", "")])
def test_decide_stops_on_a_refusal_for_another_reason(body, said):
    with pytest.raises(preflight.PreflightRefused) as caught:
        preflight.decide(400, body, SENT, "auto", WHERE)
    assert str(caught.value) == \
        "http://h:1 (/v1/completions): HTTP 400: the server refused the preflight request" + said


@pytest.mark.parametrize("value,mode", [("auto", "auto"), (True, "true"), (False, "false"), ("TRUE", "true"),
                                        ("no", "false"), (" on ", "true"), ("0", "false")])
def test_ignore_eos_settings(value, mode):
    assert preflight.ignore_eos_mode(value) == mode


@pytest.mark.parametrize("value", ["maybe", 1, None, ["auto"]])
def test_a_bad_ignore_eos_setting_is_one_line(value):
    with pytest.raises(ConfigError) as caught:
        preflight.ignore_eos_mode(value)
    assert str(caught.value) == "ignore_eos: expected auto, true or false, got %r" % (value,)


# --------------------------------------------------------------------------
# the preflight against a server


def make_client(url, ignore_eos="auto", extra=None, endpoint="completions"):
    settings = runner.Settings(client.Target(url), "fake-model", endpoint, True, None, extra, 5.0,
                               ignore_eos=ignore_eos)
    data = prompts.SyntheticPrompts(parse_length("16"), parse_length("8"), prompts.WordEstimate())
    return runner.LoadClient(settings, data)


def preflight_then_stage(load_client, stage):
    async def go():
        try:
            warnings = await load_client.preflight()
            ran = await load_client.run_stage(stage)
            return warnings, ran.records
        finally:
            load_client.close()
    return runner.run_on_new_loop(go())


def test_a_server_that_accepts_every_field_gets_ignore_eos(fake_server):
    server = fake_server(ttft=0.002, itl=0.001, natural_tokens=3)
    load_client = make_client(server.url)
    warnings, records = preflight_then_stage(load_client, Stage("constant", rate=50, max_requests=4))
    assert warnings == [] and load_client.preflight_answer is None and load_client.settings.ignore_eos_sent
    assert all(t.fields == ["ignore_eos", "max_tokens", "model", "prompt", "stream", "stream_options"]
               for t in server.server.timings)
    assert all(r.ok and r.output_tokens == 8 and r.short_output is False for r in records)


@pytest.mark.parametrize("endpoint", ["completions", "chat"])
def test_ignore_eos_auto_drops_a_refused_ignore_eos_and_marks_the_short_outputs(fake_server, endpoint):
    server = fake_server(ttft=0.002, itl=0.001, accepted_fields=OPENAI_FIELDS, natural_tokens=3)
    load_client = make_client(server.url, endpoint=endpoint)
    warnings, records = preflight_then_stage(load_client, Stage("constant", rate=50, max_requests=5))
    assert warnings == []
    assert load_client.preflight_answer == {
        "dropped": ["ignore_eos"], "server_said": ["HTTP 422: Unexpected fields in the request: {'ignore_eos'}"]}
    assert server.server.rejected == [["ignore_eos"]] and not load_client.settings.ignore_eos_sent
    assert all(r.ok and r.output_tokens == 3 and r.output_tokens_source == "usage" and r.short_output for r in records)
    summary = StageSummary(Stage("constant", rate=50, max_requests=5), records, 50.0)
    assert (summary.short_outputs, summary.short_output_known, summary.short_output_share) == (5, 5, 1.0)
    assert summary.short_output_basis == {"usage": 5}


@pytest.mark.parametrize("style,rounds", [("pydantic", [["ignore_eos", "stream_options"]]),
                                          ("openai", [["ignore_eos", "stream_options"], ["stream_options"]]),
                                          ("transformers", [["ignore_eos", "stream_options"]])])
def test_stream_options_is_dropped_too_and_the_tokens_are_counted_from_the_chunks(fake_server, style, rounds):
    server = fake_server(ttft=0.002, itl=0.001, accepted_fields=("model", "prompt", "max_tokens", "stream"),
                         reject_style=style)
    load_client = make_client(server.url)
    warnings, records = preflight_then_stage(load_client, Stage("constant", rate=50, max_requests=3))
    assert warnings == [] and load_client.preflight_answer["dropped"] == ["ignore_eos", "stream_options"]
    assert len(load_client.preflight_answer["server_said"]) == len(rounds)
    assert server.server.rejected == rounds     # an OpenAI-style answer names one field at a time: two rounds
    assert all(r.ok and r.output_tokens == 8 and r.output_tokens_source == "chunks" for r in records)


def test_ignore_eos_true_refused_stops_before_the_load(fake_server):
    server = fake_server(accepted_fields=OPENAI_FIELDS)
    load_client = make_client(server.url, ignore_eos="true")
    with pytest.raises(runner.StartError) as caught:
        preflight_then_stage(load_client, Stage("constant", rate=50, max_requests=5))
    assert str(caught.value) == (
        "%s (/v1/completions): HTTP 422: the server does not accept the field ignore_eos, which ignore_eos: true "
        "(--ignore-eos true) sends; use ignore_eos: auto (drop it when refused) or false: "
        "Unexpected fields in the request: {'ignore_eos'}" % server.url)
    assert server.server.timings == []      # nothing of the load was sent


def test_a_refused_field_of_extra_body_stops_before_the_load(fake_server):
    server = fake_server(accepted_fields=OPENAI_FIELDS, reject_style="pydantic")
    with pytest.raises(runner.StartError) as caught:
        preflight_then_stage(make_client(server.url, ignore_eos="false", extra={"top_k": 5}),
                             Stage("constant", rate=50, max_requests=5))
    assert str(caught.value) == ("%s (/v1/completions): HTTP 422: the server does not accept the field top_k of "
                                 "extra_body (--extra-body): body.top_k: Extra inputs are not permitted" % server.url)


def test_a_refusal_for_another_reason_stops_before_the_load(fake_server):
    server = fake_server(fault=lambda number, request: "http_400")
    with pytest.raises(runner.StartError) as caught:
        preflight_then_stage(make_client(server.url), Stage("constant", rate=50, max_requests=5))
    assert str(caught.value) == ("%s (/v1/completions): HTTP 400: the server refused the preflight request: "
                                 "injected http_400" % server.url)
    assert len(server.server.timings) == 1


@pytest.mark.parametrize("fault", ["http_429", "http_503"])
def test_a_busy_server_is_a_warning_and_the_run_goes_on(fake_server, fault):
    server = fake_server(fault=lambda number, request: fault if number == 0 else None)
    warnings, records = preflight_then_stage(make_client(server.url), Stage("constant", rate=50, max_requests=2))
    assert warnings == ["preflight request: %s: injected %s" % (fault, fault)]
    assert all(r.ok for r in records)


# --------------------------------------------------------------------------
# the command line: what the user sees


def cli_args(server, out, *more):
    return ["--url", server.url, "--model", "fake-model", "--rate", "50", "--max-requests", "6", "--output-tokens", "8",
            "--output", out] + list(more)


def test_the_run_against_a_strict_server_drops_ignore_eos_and_says_so(fake_server, tmp_path):
    """The reported case: transformers serve answers 422 to ignore_eos; every request failed on the code before."""
    server = fake_server(ttft=0.002, itl=0.001, accepted_fields=OPENAI_FIELDS, natural_tokens=5)
    out = tmp_path / "out"
    done = run_cli(cli_args(server, out))
    assert done.returncode == 0, done.stderr
    line = ("llm_load: preflight: the server does not accept ignore_eos (HTTP 422: Unexpected fields in the request: "
            "{'ignore_eos'}): the requests go without it (ignore_eos: auto)")
    assert done.stderr.splitlines().count(line) == 1
    document = harness_base.validate_output(done.stdout)
    result = document["@result"]
    assert document["@parameters"]["ignore_eos"] == "auto"
    assert result["request_fields_dropped"] == ["ignore_eos"] and result["ignore_eos_sent"] is False
    assert result["preflight_server_said"] == ["HTTP 422: Unexpected fields in the request: {'ignore_eos'}"]
    assert result["completed_requests"] == 6 and result["errors_by_class"] == {}
    assert (result["short_outputs"], result["short_output_share"]) == (6, 1.0)
    assert result["short_output_basis"] == {"usage": 6}
    assert "stage 0: 6 of 6 outputs ended before max_tokens (ignore_eos was not sent: the server stops at the " \
           "end-of-sequence token)" in result["warnings"]
    report = json.loads((out / "benchmark_report_stage_0.json").read_text())
    assert report["results"]["observability"]["load_generator"]["short_outputs"] == {
        "count": 6, "of": 6, "share": 1.0, "basis": {"usage": 6}}
    records = [json.loads(line) for line in (out / "requests.jsonl").read_text().splitlines()]
    assert [r["short_output"] for r in records] == [True] * 6


def test_ignore_eos_true_against_a_strict_server_fails_at_once(fake_server, tmp_path):
    server = fake_server(accepted_fields=OPENAI_FIELDS)
    done = run_cli(cli_args(server, tmp_path / "out", "--ignore-eos", "true"))
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "llm_load: %s (/v1/completions): HTTP 422: the server does not accept the field ignore_eos, which ignore_eos: "
        "true (--ignore-eos true) sends; use ignore_eos: auto (drop it when refused) or false: Unexpected fields in "
        "the request: {'ignore_eos'}" % server.url]
    assert server.server.timings == []


@pytest.mark.parametrize("flags,sent", [([], True), (["--ignore-eos"], True), (["--ignore-eos", "false"], False),
                                        (["--no-ignore-eos"], False)])
def test_ignore_eos_flags(fake_server, tmp_path, flags, sent):
    server = fake_server(ttft=0.002, itl=0.001, natural_tokens=2)
    done = run_cli(cli_args(server, tmp_path / "out", *flags))
    assert done.returncode == 0, done.stderr
    result = harness_base.validate_output(done.stdout)["@result"]
    assert result["ignore_eos_sent"] is sent and result["request_fields_dropped"] == []
    assert result["short_outputs"] == (0 if sent else 6)
    assert all(("ignore_eos" in t.fields) is sent for t in server.server.timings)


def test_a_bad_ignore_eos_value_is_a_usage_error(fake_server, tmp_path):
    server = fake_server()
    done = run_cli(cli_args(server, tmp_path / "out", "--ignore-eos", "maybe"))
    assert done.returncode == 2 and "argument --ignore-eos: invalid choice: 'maybe'" in done.stderr


# --------------------------------------------------------------------------
# the token never reaches what the preflight says


class _Transport:
    def write(self, data):
        pass

    def abort(self):
        pass

    def get_extra_info(self, name):
        return None


TOKEN = "sk-preflight-token-0123456789"


@pytest.mark.parametrize("limit", [client.MAX_ERROR_BODY, preflight.MAX_BODY])
@pytest.mark.parametrize("offset", [0, 5, 20, len(TOKEN) - 1, len(TOKEN) + 10])
def test_an_echoed_token_is_masked_even_where_the_answer_is_cut(limit, offset):
    """A 422 quoting the request's Authorization header, the token across the byte where the kept answer ends."""
    from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
    from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import api

    lead = '{"detail": "Unexpected fields in the request: {\'ignore_eos\'} (Authorization: Bearer '
    body = (lead + "x" * (limit - len(lead) - offset) + TOKEN + '")"}').encode()
    pool = client.ConnectionPool(client.Target("http://127.0.0.1:1"), api.ENDPOINTS["completions"], lambda r: None,
                                 secrets=[TOKEN])
    pool.error_body_limit = limit
    connection = client.HTTPConnection(pool)
    connection.transport = _Transport()
    record = runner.RequestRecord(-1, 0, 0, True, 0.0, 1, 1)
    connection.send(record, b"", True)
    connection.data_received(b"HTTP/1.1 422 Unprocessable Entity\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    assert record.error == "http_422" and record.end is not None
    kept = pool.last_error_body
    for text in (kept, record.error_detail, preflight.server_message(kept)):
        assert text and TOKEN[:6] not in text
    assert (secret_refs.MASK in kept) is (offset > len(TOKEN))      # whole inside what is kept: masked, else cut off
    with pytest.raises(preflight.PreflightRefused) as caught:
        preflight.decide(422, kept, SENT, "true", WHERE)
    assert TOKEN[:6] not in str(caught.value)


def test_worker_processes_leave_out_what_the_preflight_dropped(fake_server, tmp_path):
    server = fake_server(ttft=0.002, itl=0.001, accepted_fields=OPENAI_FIELDS)
    done = run_cli(cli_args(server, tmp_path / "out", "--workers", "2"))
    assert done.returncode == 0, done.stderr
    result = harness_base.validate_output(done.stdout)["@result"]
    assert result["completed_requests"] == 6 and result["request_fields_dropped"] == ["ignore_eos"]
    assert server.server.rejected == [["ignore_eos"]]     # the preflight's, in the parent; none from the workers
