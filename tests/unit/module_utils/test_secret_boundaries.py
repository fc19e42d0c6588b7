"""The secrets of every HTTP client of the collection never leave in an error, a warning, a log line or an
artifact: a server that echoes them (as they are, URL-encoded, base64 as Basic auth carries them), a
connection that fails with them in its message, a secret file with a second line. Each client is driven
against a local server (or a fake transport) and every text it leaves is grepped for the values."""

import base64
import contextlib
import http.client
import json
import logging
import os
import subprocess
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors, json_http, notify
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import client as llm_client
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import orchestrate, prompts, runner
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import ConfigError, Stage
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.distributions import parse_length
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import prometheus
from ansible_collections.perfscale.topsail.plugins.module_utils.notify import verdict
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base as stores_base
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import horreum as horreum_store
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import opensearch as opensearch_store
from ansible_collections.perfscale.topsail.plugins.module_utils.transfer import s3_client

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from notify_servers import GitHub, Horreum, Slack, serving  # noqa: E402

GH_TOKEN = "ghp_EchoTestTokenValue0123456789abcdef"
SLACK_TOKEN = "xoxb-echo-test/token+value=42"
API_KEY = "HUSR_echo_test_key_0123456789"
PASSWORD = "Pa55:w/rd+echo"
ACCESS_KEY, SECRET_KEY = "AKIAECHOTEST0123", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYECHOKEY"


def forms(value, user=None):
    """The forms a server may quote a secret in: as it is, URL-encoded, base64 (of user:value for Basic)."""
    raw = ("%s:%s" % (user, value)) if user is not None else value
    return [value, urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value),
            base64.b64encode(raw.encode()).decode()]


def assert_nowhere(texts, *values):
    for text in texts:
        for value in values:
            for form in forms(value):
                assert form not in text, (form, text)


def one_line(text):
    assert text and "\n" not in text and "Traceback" not in text, text


@contextlib.contextmanager
def echo_server(answer):
    """A local HTTP server: ``answer(method, path, headers, body)`` -> (status, content type, bytes)."""
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _serve(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            status, kind, data = answer(self.command, self.path, self.headers, body)
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = _serve

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield "http://127.0.0.1:%d" % server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def echoing(status, kind="application/json"):
    """Every answer quotes the request's credentials back, in every form (a proxy's error page)."""
    def answer(_method, _path, headers, _body):
        quoted = " ".join("%s=%s" % (name, value) for name, value in headers.items()
                          if name.lower() in ("authorization", "x-horreum-api-key"))
        text = "%s | %s" % (quoted, " ".join(urllib.parse.quote(v, safe="") for v in headers.values()))
        if kind == "application/json":
            return status, kind, json.dumps({"message": text, "error": text, "status": "error"}).encode()
        return status, kind, text.encode()
    return answer


@pytest.fixture
def failing_connection(monkeypatch):
    """Every connection of http.client fails with a message quoting what it was sending."""
    def request(self, method, url, body=None, headers=None, **_kwargs):
        raise ConnectionResetError(104, "reset while sending %s" % json.dumps(headers or {}))
    monkeypatch.setattr(http.client.HTTPConnection, "request", request)


# --------------------------------------------------------------------------
# JSON over HTTP: the GitHub and Slack notifiers' client


def test_json_http_masks_a_token_the_server_echoes_in_its_error_answer():
    with echo_server(echoing(500)) as url:
        with pytest.raises(json_http.NotifyError) as error:
            json_http.JsonHttp(url, GH_TOKEN).request("GET", "/repos/team/project/issues/42/comments")
    one_line(str(error.value))
    assert str(error.value).startswith("GET %s/repos/team/project/issues/42/comments: 500 Authorization=Bearer ********"
                                       % url)
    assert_nowhere([str(error.value), repr(error.value)], GH_TOKEN)


def test_json_http_masks_a_token_a_failed_connection_quotes(failing_connection):
    with pytest.raises(json_http.Unreachable) as error:    # still Unreachable: the notifiers' callers tell it apart
        json_http.JsonHttp("http://127.0.0.1:9", GH_TOKEN).request("GET", "/x")
    one_line(str(error.value))
    assert "reset while sending" in str(error.value) and "Bearer ********" in str(error.value)
    assert_nowhere([str(error.value), repr(error.value)], GH_TOKEN)


def test_a_token_with_a_line_break_is_refused_before_http_client_sees_it():
    # http.client refused it with a ValueError quoting the header: the token reached the console
    with echo_server(echoing(200)) as url:
        with pytest.raises(json_http.NotifyError) as error:
            json_http.JsonHttp(url, GH_TOKEN + "\n# rotated 2024-05").request("GET", "/x")
    assert str(error.value) == ("the token: holds a line break or a NUL character; expected one line (the value is "
                                "not shown)")


def test_a_token_goes_only_over_https_or_to_a_loopback_host():
    with pytest.raises(json_http.NotifyError) as error:
        json_http.JsonHttp("http://github.example.com/api/v3", GH_TOKEN)
    assert str(error.value) == (
        "api_url http://github.example.com/api/v3: credentials (the token) are only sent over https:// (or to a "
        "loopback host: 127.0.0.0/8, ::1, localhost), never in clear over http://; expected an https:// URL")
    assert json_http.JsonHttp("https://api.github.com", GH_TOKEN).url == "https://api.github.com"
    assert json_http.JsonHttp("http://localhost:8080", GH_TOKEN).url == "http://localhost:8080"
    assert json_http.JsonHttp("http://github.example.com", None).url == "http://github.example.com"   # nothing to hide


# --------------------------------------------------------------------------
# the notification path, end to end: every text it leaves is grepped


SUMMARY = {"kpis_analysed": 1, "message": "1 KPI(s) compared: no regression", "regressions": [],
           "persisting_regressions": [], "improvements": [], "inconclusive": []}


def notifications(github_url=None, slack_url=None):
    return config_schema.read_section({"notifications": {
        "github": {"enabled": github_url is not None, "api_url": github_url or "https://api.github.com",
                   "repo": "team/project", "pr_number": 42, "token_file": "github-token"},
        "slack": {"enabled": slack_url is not None, "api_url": (slack_url or "https://slack.com") + "/api",
                  "channel": "C0PERF", "token_file": "slack-token"}}}, "notifications")


@pytest.fixture
def run_root(tmp_path):
    root = tmp_path / "run"
    root.mkdir()
    (root / "run.json").write_text(json.dumps({"run_id": "0123abcd-run", "created": "2026-11-26T10:00:00+00:00"}))
    return str(root)


def secrets_dir(tmp_path, **files):
    directory = tmp_path / "secrets"
    directory.mkdir(exist_ok=True)
    for name, text in files.items():
        (directory / name.replace("_", "-")).write_text(text)
    return {"PERFSCALE_SECRETS_DIR": str(directory)}


def everything_written(run_root, outcome, caplog, capsys):
    texts = [json.dumps(outcome), caplog.text]
    captured = capsys.readouterr()
    texts += [captured.out, captured.err]
    for folder, _dirs, names in os.walk(run_root):
        for name in names:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                texts.append(handle.read())
    return texts


def test_a_token_file_with_a_second_line_is_one_warning_naming_it_and_the_verdict_stands(
        tmp_path, run_root, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    environ = secrets_dir(tmp_path, github_token=GH_TOKEN + "\n# rotated 2024-05\n", slack_token=SLACK_TOKEN)
    with serving(GitHub(GH_TOKEN)) as github, serving(Slack(SLACK_TOKEN)) as slack:
        settings = notifications(github.url, slack.url)
        message = verdict.run_message(settings, run_root, SUMMARY, (), points=1, now=lambda: 1795687323.0)
        outcome = notify.notify(settings, {}, message, run_root, environ=environ)
        assert github.requests == []                      # nothing was sent with it
    path = os.path.join(environ["PERFSCALE_SECRETS_DIR"], "github-token")
    assert outcome["warnings"] == [
        "notifications.github: secret 'github-token' (file %s): holds 2 non-empty lines; expected one value on one "
        "line (a comment or a second value does not belong in a secret file) (spooled: the verdict stands)" % path]
    assert [d["notifier"] for d in outcome["delivered"]] == ["slack"]
    assert os.listdir(os.path.join(run_root, "notify_spool")) == ["github.json"]
    texts = everything_written(run_root, outcome, caplog, capsys)
    assert_nowhere(texts, GH_TOKEN, SLACK_TOKEN, "rotated 2024-05")


def test_tokens_the_servers_echo_are_in_no_warning_log_or_artifact(tmp_path, run_root, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    environ = secrets_dir(tmp_path, github_token=GH_TOKEN + "\n", slack_token=SLACK_TOKEN)
    with serving(GitHub(GH_TOKEN)) as github, serving(Slack(SLACK_TOKEN)) as slack:
        github.faults.append((500, {}, {"message": "upstream refused %s" % " ".join(forms(GH_TOKEN))}))
        slack.faults.append((502, {}, {"ok": False, "error": "proxy: Authorization: Bearer %s (%s)"
                                       % (SLACK_TOKEN, urllib.parse.quote(SLACK_TOKEN, safe=""))}))
        settings = notifications(github.url, slack.url)
        message = verdict.run_message(settings, run_root, SUMMARY, (), points=1, now=lambda: 1795687323.0)
        outcome = notify.notify(settings, {}, message, run_root, environ=environ)
    assert outcome["delivered"] == [] and len(outcome["warnings"]) == 2
    assert "500 upstream refused ********" in outcome["warnings"][0]
    assert "502 proxy: Authorization: Bearer ********" in outcome["warnings"][1]
    for warning in outcome["warnings"]:
        one_line(warning)
    texts = everything_written(run_root, outcome, caplog, capsys)
    assert_nowhere(texts, GH_TOKEN, SLACK_TOKEN)


# --------------------------------------------------------------------------
# Horreum


def horreum_documents(run_id="run-1"):
    fields = {"indicator": "matmul", "run_id": run_id, "kpi_name": "rate", "value": 10.0, "unit": "x",
              "higher_is_better": True, "ignored_for_regression": False, "test_uuid": run_id + "-t0",
              "workload": "perf_indicators", "@timestamp": "2026-11-26T10:00:00+00:00"}
    return [stores_base.kpi_document(fields)]


class UploadEchoingHorreum(Horreum):
    """Horreum whose upload fails with a 500 that quotes the request's API key."""

    def answer(self, method, path, query, headers, body):
        if method == "POST":
            return 500, {}, {"error": "bad key %s" % headers.get("X-Horreum-API-Key")}
        return super().answer(method, path, query, headers, body)


def test_horreum_masks_an_api_key_its_500_answer_echoes():
    with serving(UploadEchoingHorreum(API_KEY)) as server:
        store = horreum_store.HorreumStore(server.url, "perfscale-demo", API_KEY)
        server.faults.append((500, {}, ("Internal error: X-Horreum-API-Key=%s" % " ".join(forms(API_KEY))).encode()))
        with pytest.raises(errors.StoreError) as error:
            store.write(horreum_documents())
        # the look-up goes through; the upload's 500 quotes the key: the document is rejected with it masked
        result = store.write(horreum_documents())
    assert str(error.value).startswith("GET %s/api/test/byName/perfscale-demo: 500 Internal error: "
                                       "X-Horreum-API-Key=********" % server.url)
    assert result.delivered == [] and [reason for _doc, reason in result.rejected] == [
        "POST %s/api/run/data: 500 bad key ********" % server.url]
    texts = [str(error.value), repr(error.value)] + [reason for _doc, reason in result.rejected]
    assert_nowhere(texts, API_KEY)


def test_horreum_masks_an_api_key_a_failed_connection_quotes(failing_connection):
    store = horreum_store.HorreumStore("http://127.0.0.1:9", "perfscale-demo", API_KEY)
    with pytest.raises(errors.StoreUnavailable) as error:
        store.write(horreum_documents())
    one_line(str(error.value))
    assert_nowhere([str(error.value)], API_KEY)


def test_horreum_refuses_a_two_line_key_file_and_a_key_in_clear(tmp_path):
    environ = secrets_dir(tmp_path, horreum_key=API_KEY + "\nold-key\n")
    export = {"horreum": {"url": "https://horreum.example.com", "test": "t", "api_key_file": "horreum-key"},
              "timeout_s": 5}
    with pytest.raises(errors.StoreError) as error:
        horreum_store.HorreumStore.from_settings(export, {}, environ)
    assert str(error.value) == (
        "export.horreum.api_key_file: secret 'horreum-key' (file %s): holds 2 non-empty lines; expected one value on "
        "one line (a comment or a second value does not belong in a secret file)"
        % os.path.join(environ["PERFSCALE_SECRETS_DIR"], "horreum-key"))
    with pytest.raises(errors.StoreConfigError) as error:
        horreum_store.HorreumStore("http://horreum.example.com", "t", API_KEY)
    assert str(error.value) == (
        "export.horreum.url http://horreum.example.com: credentials (the API key (export.horreum.api_key_file)) are "
        "only sent over https:// (or to a loopback host: 127.0.0.0/8, ::1, localhost), never in clear over http://; "
        "expected an https:// URL")
    with pytest.raises(errors.ConfigError, match=r"url http://horreum\.example\.com: credentials \(the API key\) are "
                                                 r"only sent over https://"):
        config_schema.read_section({"export": {"horreum": {"url": "http://horreum.example.com", "test": "t",
                                                           "api_key_file": "k"}}}, "export")


# --------------------------------------------------------------------------
# OpenSearch


class FailingOpenSearch:
    """opensearch-py's client, as far as a bulk write goes, failing the way it does with what it was given."""

    def __init__(self, exc):
        self.exc = exc

    def bulk(self, **_kwargs):
        raise self.exc


def test_opensearch_masks_credentials_in_its_client_errors_and_keeps_their_types():
    from opensearchpy import exceptions

    basic = base64.b64encode(("admin:%s" % PASSWORD).encode()).decode()
    failures = [exceptions.ConnectionError("N/A", "POST https://os:9200/_bulk Authorization: Basic %s" % basic,
                                           OSError(111, "refused %s" % PASSWORD)),
                exceptions.TransportError(500, "echo %s" % urllib.parse.quote(PASSWORD, safe=""),
                                          {"error": {"reason": "auth admin:%s" % PASSWORD}})]
    for failure in failures:
        store = opensearch_store.OpenSearchStore(["https://os.example.com:9200"], credentials=("admin", PASSWORD),
                                                 client=FailingOpenSearch(failure), max_retries=0)
        with pytest.raises(errors.StoreUnavailable) as error:   # the store's own except clause still caught it
            store.write(horreum_documents())
        one_line(str(error.value))
        assert str(error.value).startswith("opensearch https://os.example.com:9200: ")
        assert_nowhere([str(error.value), repr(error.value)], PASSWORD)
        assert basic not in str(error.value)


def test_opensearch_sends_credentials_only_over_https_or_to_a_loopback_host():
    with pytest.raises(errors.StoreConfigError) as error:
        opensearch_store.OpenSearchStore(["http://os.example.com:9200"], credentials=("admin", PASSWORD),
                                         client=object())
    assert str(error.value) == (
        "export.opensearch.hosts http://os.example.com:9200: credentials (export.opensearch.credentials_file, a URL's "
        "user-info) are only sent over https:// (or to a loopback host: 127.0.0.0/8, ::1, localhost), never in clear "
        "over http://; expected an https:// URL")
    with pytest.raises(errors.StoreConfigError, match=r"^export\.opensearch\.hosts http://\*\*\*@os:9200: "):
        opensearch_store.OpenSearchStore(["http://admin:s3cr3t-in-url@os:9200"], client=object())
    opensearch_store.OpenSearchStore(["http://127.0.0.1:9200"], credentials=("admin", PASSWORD), client=object())
    opensearch_store.OpenSearchStore(["http://os.example.com:9200"], client=object())    # no credentials


def test_an_opensearch_password_of_two_lines_is_refused_by_its_key(tmp_path):
    environ = secrets_dir(tmp_path, opensearch_yaml="username: admin\npassword: |\n  %s\n  old\n" % PASSWORD)
    with pytest.raises(errors.StoreConfigError) as error:
        opensearch_store.read_credentials({}, "opensearch-yaml", environ)
    assert str(error.value) == (
        "export.opensearch.credentials_file: secret 'opensearch-yaml' (file %s): key password: holds 2 non-empty "
        "lines; expected one value on one line (a comment or a second value does not belong in a secret file)"
        % os.path.join(environ["PERFSCALE_SECRETS_DIR"], "opensearch-yaml"))


# --------------------------------------------------------------------------
# S3


def s3_echo(_method, _path, headers, _body):
    authorization = headers.get("authorization", "")
    document = ("<Error><Code>InvalidAccessKeyId %s</Code><Message>secret %s, %s</Message></Error>"
                % (authorization, SECRET_KEY, urllib.parse.quote_plus(SECRET_KEY)))
    return 403, "application/xml", document.encode()


def test_s3_masks_keys_an_error_answer_quotes_and_keeps_its_status():
    with echo_server(s3_echo) as url:
        with pytest.raises(s3_client.S3Error) as error:
            s3_client.S3Client(url, ACCESS_KEY, SECRET_KEY, retries=0).get_object("bucket", "key")
    assert error.value.status == 403
    assert str(error.value).startswith("GET bucket/key: 403 InvalidAccessKeyId AWS4-HMAC-SHA256 Credential=********/")
    assert_nowhere([str(error.value), repr(error.value), str(error.value.code)], ACCESS_KEY, SECRET_KEY)


def test_s3_masks_keys_a_failed_connection_quotes(failing_connection):
    with pytest.raises(s3_client.S3Error) as error:
        s3_client.S3Client("http://127.0.0.1:9", ACCESS_KEY, SECRET_KEY, retries=0).get_object("bucket", "key")
    assert error.value.status is None and "reset while sending" in str(error.value)
    assert_nowhere([str(error.value)], ACCESS_KEY)


def test_an_s3_key_with_a_line_break_is_refused_by_name():
    with pytest.raises(s3_client.S3Error) as error:
        s3_client.S3Client("http://127.0.0.1:9", ACCESS_KEY + "\nold", SECRET_KEY)
    assert str(error.value) == ("the S3 access key: holds a line break or a NUL character; expected one line (the "
                                "value is not shown)")


def test_a_user_pod_loads_the_s3_client_and_its_mask_by_path():
    # a user pod runs with -S -P and no package: s3_client.py finds config/secrets.py beside it
    path = s3_client.__file__
    script = ("import importlib.util, sys\n"
              "spec = importlib.util.spec_from_file_location('s3c', %r)\n"
              "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
              "assert 'ansible_collections' not in sys.modules\n"
              "try:\n"
              "    module.S3Client('http://127.0.0.1:9', 'AKIA\\nX', 'k')\n"
              "except module.S3Error as exc:\n"
              "    print(exc)\n"
              "print(module.secret_refs.SecretMask(['s3cr3t-value']).mask('a s3cr3t-value b'))\n" % path)
    done = subprocess.run([sys.executable, "-S", "-P", "-c", script], capture_output=True, text=True, check=False,
                          cwd="/")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("the S3 access key: holds a line break or a NUL character; expected one line (the value is "
                           "not shown)\na ******** b\n")


# --------------------------------------------------------------------------
# Prometheus


PROM_TOKEN = "sha256~PrometheusEchoToken0123456789"


def test_prometheus_masks_a_token_its_error_answer_echoes():
    with echo_server(echoing(500)) as url:
        client = prometheus.PrometheusClient(url, timeout=5, token=PROM_TOKEN)
        with pytest.raises(prometheus.PrometheusError) as error:
            client.query_range("up", 0, 60, 15)
    one_line(str(error.value))
    assert str(error.value).startswith("GET %s/api/v1/query_range: 500 Authorization=Bearer ********" % url)
    assert_nowhere([str(error.value), repr(error.value)], PROM_TOKEN)


def test_prometheus_masks_a_token_a_failed_connection_quotes(failing_connection):
    with pytest.raises(prometheus.PrometheusError) as error:
        prometheus.PrometheusClient("http://127.0.0.1:9", timeout=5, token=PROM_TOKEN).query_range("up", 0, 60, 15)
    one_line(str(error.value))
    assert_nowhere([str(error.value)], PROM_TOKEN)


def test_a_prometheus_token_goes_in_one_line_and_only_over_https_or_to_a_loopback_host():
    with pytest.raises(prometheus.PrometheusError) as error:
        prometheus.PrometheusClient("http://thanos.example.com:9091", token=PROM_TOKEN)
    assert str(error.value) == (
        "prometheus_url http://thanos.example.com:9091: credentials (the bearer token of prometheus_token_secret) are "
        "only sent over https:// (or to a loopback host: 127.0.0.0/8, ::1, localhost), never in clear over http://; "
        "expected an https:// URL")
    with pytest.raises(prometheus.PrometheusError) as error:
        prometheus.PrometheusClient("https://thanos.example.com", token=PROM_TOKEN + "\n#")
    assert str(error.value) == ("prometheus_token_secret: holds a line break or a NUL character; expected one line "
                                "(the value is not shown)")
    assert prometheus.PrometheusClient("http://thanos.example.com:9091").url == "http://thanos.example.com:9091"


# --------------------------------------------------------------------------
# the LLM load client


LLM_TOKEN = "sk-llm-echo-token-0123456789"


def load_client(url, token):
    settings = runner.Settings(llm_client.Target(url), "fake-model", "completions", True, token, None, 5.0)
    data = prompts.SyntheticPrompts(parse_length("16"), parse_length("4"), prompts.WordEstimate())
    return runner.LoadClient(settings, data)


def run_on(client, factory):
    async def go():
        try:
            return await factory(client)
        finally:
            client.close()
    return runner.run_on_new_loop(go())


@pytest.mark.parametrize("status, kind", [(401, "application/json"), (500, "text/plain")])
def test_llm_load_masks_a_token_the_server_echoes(status, kind):
    with echo_server(echoing(status, kind)) as url:
        if status == 401:
            with pytest.raises(runner.StartError) as error:
                run_on(load_client(url, LLM_TOKEN), lambda c: c.preflight())
            texts = [str(error.value)]
            assert "HTTP 401: the server refused the credentials (--token-file): " in texts[0]
        else:
            records = run_on(load_client(url, LLM_TOKEN),
                             lambda c: c.run_stage(Stage("constant", rate=20, max_requests=3))).records
            texts = [json.dumps(r.error_detail) for r in records]
            assert all(r.error == "http_500" and "Bearer ********" in r.error_detail for r in records)
    assert_nowhere(texts, LLM_TOKEN)


def test_llm_load_masks_a_token_across_the_cut_of_a_long_answer():
    # the error detail keeps 200 characters: the token straddles that cut and leaves nothing of itself
    def answer(_method, _path, _headers, _body):
        return 500, "text/plain", ("x" * 190 + LLM_TOKEN).encode()
    with echo_server(answer) as url:
        records = run_on(load_client(url, LLM_TOKEN), lambda c: c.run_stage(Stage("constant", rate=20,
                                                                                  max_requests=1))).records
    assert records[0].error_detail == "x" * 190 + "********"
    assert LLM_TOKEN[:4] not in records[0].error_detail


def test_llm_load_token_file_is_one_value_and_goes_only_over_https_or_to_a_loopback_host(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(LLM_TOKEN + "\n# rotated\n")
    with pytest.raises(ConfigError) as error:
        llm_client.read_token_file(str(token_file))
    assert str(error.value) == ("--token-file %s: holds 2 non-empty lines; expected one value on one line (a comment "
                                "or a second value does not belong in a secret file)" % token_file)
    token_file.write_text(LLM_TOKEN + "\n")
    with pytest.raises(ConfigError) as error:
        orchestrate.build_settings({"url": "http://vllm.example.com:8000", "model": "m", "token_file": str(token_file)})
    assert str(error.value) == (
        "--url http://vllm.example.com:8000: credentials (the token of --token-file) are only sent over https:// (or "
        "to a loopback host: 127.0.0.0/8, ::1, localhost), never in clear over http://; expected an https:// URL")
    assert orchestrate.build_settings({"url": "http://127.0.0.1:8000", "model": "m",
                                       "token_file": str(token_file)}).token == LLM_TOKEN
    assert orchestrate.build_settings({"url": "http://vllm.example.com:8000", "model": "m"}).token is None
