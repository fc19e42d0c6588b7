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
