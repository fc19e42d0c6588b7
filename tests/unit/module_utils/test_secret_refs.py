import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as sec

CONFIG = {"secrets": {"dir_env": "MY_SECRETS"}}


@pytest.fixture
def secrets_dir(tmp_path):
    (tmp_path / "token").write_text("s3cr3t-value\n")
    return tmp_path


def test_reads_secret_from_directory_named_by_env(secrets_dir):
    assert sec.read_secret(CONFIG, "token", environ={"MY_SECRETS": str(secrets_dir)}) == "s3cr3t-value"
    assert sec.resolve_secret_ref(CONFIG, "secret:token", environ={"MY_SECRETS": str(secrets_dir)}) == "s3cr3t-value"
    assert sec.resolve_secret_ref(CONFIG, "plain", environ={}) == "plain"


def test_default_env_variable_when_config_does_not_name_one(secrets_dir):
    assert sec.read_secret({}, "token", environ={"PERFSCALE_SECRETS_DIR": str(secrets_dir)}) == "s3cr3t-value"


def test_unset_env_names_the_variable():
    with pytest.raises(errors.SecretError, match=r"environment variable MY_SECRETS is not set"):
        sec.read_secret(CONFIG, "token", environ={})


def test_missing_secret_does_not_leak_paths_or_values(secrets_dir):
    with pytest.raises(errors.SecretError, match=r"secret 'absent': cannot be read"):
        sec.read_secret(CONFIG, "absent", environ={"MY_SECRETS": str(secrets_dir)})


@pytest.mark.parametrize("name", ["../etc/passwd", "a/b", "..", ""])
def test_names_cannot_escape_the_directory(secrets_dir, name):
    with pytest.raises(errors.SecretError, match="expected a file name inside the secrets directory"):
        sec.read_secret(CONFIG, name, environ={"MY_SECRETS": str(secrets_dir)})


def test_mask_text_replaces_every_occurrence():
    assert sec.mask_text("a s3cr3t b s3cr3t", ["s3cr3t"]) == "a ******** b ********"


def test_mask_params_by_name_value_and_explicit_list():
    params = {
        "password": "hunter2",
        "api_token": "abc",
        "credentials_file": "opensearch.yaml",
        "url": "https://user:s3cr3t@host",
        "ref": "secret:token",
        "custom": "visible",
        "nested": {"auth_token": "x", "items": ["s3cr3t"]},
    }
    masked = sec.mask_params(params, secret_values=["s3cr3t"], sensitive_names=["custom"])
    assert masked == {
        "password": sec.MASK,
        "api_token": sec.MASK,
        "credentials_file": "opensearch.yaml",
        "url": "https://***@host",  # the whole user-info, not only the known secret
        "ref": "secret:token",
        "custom": sec.MASK,
        "nested": {"auth_token": sec.MASK, "items": [sec.MASK]},
    }
    assert params["password"] == "hunter2"


def test_url_user_info_is_masked_wherever_a_configuration_is_written():
    params = {"export": {"opensearch": {"hosts": ["https://admin:Pa55@os:9200", "http://os2:9200"]}},
              "note": "see https://bob:x@git.example.com/repo and mailto:someone"}
    masked = sec.mask_params(params)
    assert masked["export"]["opensearch"]["hosts"] == ["https://***@os:9200", "http://os2:9200"]
    assert masked["note"] == "see https://***@git.example.com/repo and mailto:someone"


# --------------------------------------------------------------------------
# a secret file is one value


TOKEN = "ghp_0123456789abcdefABCDEF0123456789abcd"


@pytest.mark.parametrize("content, lines", [
    (TOKEN + "\n# rotated 2024-05\n", 2),
    (TOKEN + "\r\n# rotated 2024-05\r\n", 2),
    (TOKEN + "\rold-" + TOKEN, 2),
    ("# the GitHub token\n" + TOKEN + "\n\n" + TOKEN + "-old\n", 3),
])
def test_a_secret_file_with_a_second_line_is_refused_by_name_without_its_content(tmp_path, content, lines):
    (tmp_path / "github-token").write_text(content, newline="")
    path = str(tmp_path / "github-token")
    expected = ("secret 'github-token' (file %s): holds %d non-empty lines; expected one value on one line (a comment "
                "or a second value does not belong in a secret file)" % (path, lines))
    environ = {"MY_SECRETS": str(tmp_path)}
    for read in (lambda: sec.read_secret(CONFIG, "github-token", environ),
                 lambda: sec.read_referenced_secret(CONFIG, "secret:github-token", environ),
                 lambda: sec.read_referenced_secret(CONFIG, "github-token", environ),
                 lambda: sec.resolve_secret_ref(CONFIG, "secret:github-token", environ)):
        with pytest.raises(errors.SecretError) as error:
            read()
        assert str(error.value) == expected
        assert "rotated" not in str(error.value) and TOKEN[4:12] not in str(error.value)


@pytest.mark.parametrize("content", [TOKEN, TOKEN + "\n", "  " + TOKEN + " \n\n\n", TOKEN + "\r\n", "\n\t" + TOKEN])
def test_whitespace_around_the_value_and_a_final_newline_are_fine(tmp_path, content):
    (tmp_path / "github-token").write_text(content, newline="")
    assert sec.read_referenced_secret(CONFIG, "github-token", {"MY_SECRETS": str(tmp_path)}) == TOKEN


def test_a_control_character_or_a_file_that_is_not_utf8_is_refused_without_its_content(tmp_path):
    (tmp_path / "tok").write_text("abc\x00def\x1b[2J")
    path = str(tmp_path / "tok")
    with pytest.raises(errors.SecretError) as error:
        sec.read_secret(CONFIG, "tok", {"MY_SECRETS": str(tmp_path)})
    assert str(error.value) == ("secret 'tok' (file %s): holds a control character; expected one value of printable "
                                "characters" % path)
    (tmp_path / "tok").write_bytes(b"abc\xff\xfedef")
    with pytest.raises(errors.SecretError) as error:
        sec.read_secret(CONFIG, "tok", {"MY_SECRETS": str(tmp_path)})
    assert str(error.value) == "secret 'tok' (file %s): is not UTF-8 text; expected a UTF-8 text file" % path


def test_a_mapping_secret_and_a_lookup_read_several_lines(tmp_path):
    (tmp_path / "creds.yaml").write_text("# OpenSearch\nusername: admin\npassword: '  Pa55 '\n")
    (tmp_path / "minio.properties").write_text("user=minio\npassword=minio123\n")
    environ = {"MY_SECRETS": str(tmp_path)}
    assert sec.read_secret_mapping(CONFIG, "creds.yaml", environ, one_value_keys=("username", "password")) == {
        "username": "admin", "password": "Pa55"}
    assert sec.read_secret(CONFIG, "minio.properties", environ, single=False) == "user=minio\npassword=minio123"


def test_a_key_of_a_mapping_secret_that_must_be_one_value_is_refused_by_its_key(tmp_path):
    (tmp_path / "s3.yaml").write_text("access_key_id: AKIAEXAMPLE\nsecret_access_key: |\n  wJalrXUtnFEMI\n  # old\n")
    with pytest.raises(errors.SecretError) as error:
        sec.read_secret_mapping(CONFIG, "s3.yaml", {"MY_SECRETS": str(tmp_path)},
                                one_value_keys=("access_key_id", "secret_access_key"))
    assert str(error.value) == (
        "secret 's3.yaml' (file %s): key secret_access_key: holds 2 non-empty lines; expected one value on one line "
        "(a comment or a second value does not belong in a secret file)" % (tmp_path / "s3.yaml"))


# --------------------------------------------------------------------------
# the mask every HTTP client runs under


def test_a_secret_is_masked_in_every_form_it_can_take_in_a_message():
    import base64
    import json
    import urllib.parse

    password = "p@ss/w:rd+\"1\""
    mask = sec.SecretMask([TOKEN], basic=[("admin", password)])
    forms = [TOKEN, urllib.parse.quote(password, safe=""), urllib.parse.quote_plus(password), json.dumps(password),
             base64.b64encode(("admin:" + password).encode()).decode(), base64.b64encode(TOKEN.encode()).decode(),
             repr(TOKEN + "\n# x"), repr(("Bearer " + TOKEN).encode())]
    for form in forms:
        masked = mask.mask("server said: <%s> and https://admin:%s@host/" % (form, "pw"))
        assert sec.MASK in masked and TOKEN not in masked and "https://***@host/" in masked, form
        assert not mask.holds(masked) and mask.holds(form)
    assert not sec.SecretMask([]) and not sec.SecretMask(["ab"]) and sec.SecretMask(["abc"])
    assert sec.mask_text(urllib.parse.quote_plus(password) + " x", [password]) == sec.MASK + " x"


class DomainError(errors.PerfscaleError):
    pass


class Reply(DomainError):
    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def test_the_guard_raises_the_same_failure_with_its_text_masked():
    mask = sec.SecretMask([TOKEN])
    clean = ValueError("nothing secret here")
    with pytest.raises(ValueError) as error:
        with mask.guard(DomainError, keep=(DomainError,)):
            raise clean
    assert error.value is clean                          # a failure without a secret is left alone
    with pytest.raises(Reply) as error:                  # a kept type stays itself, its attributes too
        with mask.guard(DomainError, keep=(DomainError,)):
            raise Reply("GET /x: 500 bad header Bearer %s" % TOKEN, status=500)
    assert str(error.value) == "GET /x: 500 bad header Bearer ********" and error.value.status == 500
    assert error.value.__suppress_context__
    two_lines = TOKEN + "\n# rotated 2024-05"
    with pytest.raises(DomainError) as error:            # anything else becomes the client's one line
        with sec.SecretMask([two_lines]).guard(DomainError, keep=(DomainError,)):
            raise ValueError("Invalid header value %r" % ("Bearer " + two_lines).encode())   # http.client's words
    assert type(error.value) is DomainError  # pylint: disable=unidiomatic-typecheck
    assert str(error.value) == "Invalid header value b'Bearer ********'"
    with pytest.raises(ConnectionResetError) as error:   # an OSError kept: its errno and masked text
        with mask.guard(DomainError, keep=(OSError,)):
            raise ConnectionResetError(104, "reset while sending %s" % TOKEN)
    assert error.value.errno == 104 and TOKEN not in str(error.value) and TOKEN not in repr(error.value)


def test_a_wrapped_client_masks_its_namespaces_and_keeps_the_types_its_callers_catch():
    class Indices:
        def create(self, index):
            raise ConnectionError("N/A", "POST https://os:9200/%s: Authorization: Basic %s" % (index, "c2VjcmV0LXB3"))

    class Client:
        indices = Indices()
        name = "fake"

        def count(self):
            return 3

    wrapped = sec.SecretMask(["secret-pw"]).wrap(Client(), DomainError)
    assert wrapped.count() == 3 and wrapped.name == "fake"
    with pytest.raises(ConnectionError) as error:
        wrapped.indices.create("kpis")
    assert "c2VjcmV0LXB3" not in str(error.value) and error.value.args[0] == "N/A"


def test_a_header_value_with_a_line_break_is_refused_by_name():
    assert sec.header_problem("abc", "the token") is None
    for value in ("abc\n# x", "abc\r", "a\x00b"):
        assert sec.header_problem(value, "the token") == (
            "the token: holds a line break or a NUL character; expected one line (the value is not shown)")


@pytest.mark.parametrize("url", ["https://api.example.com", "http://127.0.0.1:8080/x", "http://127.8.9.10",
                                 "http://[::1]:9200", "http://localhost:3000", "http://LOCALHOST.", "localhost:9200",
                                 "http://[::ffff:127.0.0.1]:80"])
def test_credentials_go_over_https_or_to_a_loopback_host(url):
    assert sec.cleartext_problem(url, "api_url") is None


@pytest.mark.parametrize("url, scheme", [("http://api.example.com/v3", "http"), ("http://10.0.0.1:9200", "http"),
                                         ("http://admin:pw@os.example.com:9200", "http"),
                                         ("os.example.com:9200", "http"), ("http://127.0.0.1.example.com", "http"),
                                         ("ftp://[::2]/", "ftp")])
def test_credentials_in_clear_to_another_host_are_refused_by_setting_and_url(url, scheme):
    problem = sec.cleartext_problem(url, "notifications.github.api_url", "credentials (the token)")
    assert problem == ("notifications.github.api_url %s: credentials (the token) are only sent over https:// (or to "
                       "a loopback host: 127.0.0.0/8, ::1, localhost), never in clear over %s://; expected an https:// "
                       "URL" % (sec.redact_url(url), scheme))
    assert "pw" not in problem
