# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets are referenced, never copied.

The configuration names an environment variable (``secrets.dir_env``) that
points at a secrets directory. A configuration value ``secret:NAME`` refers to
the file ``NAME`` in that directory. The value is read when it is used, is
never written into the effective configuration, and every value read can be
masked out of text before the text is written anywhere.
"""

from __future__ import annotations

import os
import re

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import SecretError

SECRET_PREFIX = "secret:"
MASK = "********"
DEFAULT_DIR_ENV = "PERFSCALE_SECRETS_DIR"

# the user-info of a URL (https://user:password@host): credentials, wherever they appear
URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")

# parameter names treated as sensitive even when their value is not a known secret (token, not
# tokens: max_output_tokens is a length)
SENSITIVE_NAME = re.compile(r"(password|passwd|token(?!s)|secret|credential|api_?key|private_?key)", re.IGNORECASE)
# ... unless they name where a secret lives rather than the secret itself
REFERENCE_NAME = re.compile(r"(_file|_env|_dir|_path|_name)$", re.IGNORECASE)


def is_sensitive_name(name):
    return bool(name is not None and SENSITIVE_NAME.search(str(name)) and not REFERENCE_NAME.search(str(name)))


def is_secret_ref(value):
    return isinstance(value, str) and value.startswith(SECRET_PREFIX) and len(value) > len(SECRET_PREFIX)


def secret_name(value):
    return value[len(SECRET_PREFIX):].strip()


def secrets_dir_env(config):
    section = config.get("secrets") if isinstance(config, dict) else None
    if isinstance(section, dict) and section.get("dir_env"):
        return str(section["dir_env"])
    return DEFAULT_DIR_ENV


def secrets_dir(config, environ=None):
    environ = os.environ if environ is None else environ
    env_key = secrets_dir_env(config)
    path = environ.get(env_key)
    if not path:
        raise SecretError(
            "secrets directory: environment variable %s is not set (config key secrets.dir_env names it)" % env_key
        )
    if not os.path.isdir(path):
        raise SecretError("secrets directory: %s=%s is not a directory" % (env_key, path))
    return path


def secret_path(config, name, environ=None):
    """Path of the secret file ``name``; names are plain file names."""
    if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or "\\" in name:
        raise SecretError("secret name %r: expected a file name inside the secrets directory" % (name,))
    return os.path.join(secrets_dir(config, environ), name)


def read_secret(config, name, environ=None, strip=True):
    """Read the secret file ``name`` from the secrets directory."""
    path = secret_path(config, name, environ)
    try:
        with open(path, encoding="utf-8") as handle:
            value = handle.read()
    except OSError as exc:
        raise SecretError("secret '%s': cannot be read from the secrets directory: %s" % (name, exc.strerror or exc)) from None
    return value.strip() if strip else value


def reference_name(reference):
    """The secret file a setting names: ``NAME`` or ``secret:NAME``."""
    return secret_name(reference) if is_secret_ref(reference) else reference


def read_referenced_secret(config, reference, environ=None):
    """The secret file a setting names (``NAME`` or ``secret:NAME``), stripped."""
    return read_secret(config, reference_name(reference), environ)


def read_secret_mapping(config, reference, environ=None):
    """The YAML mapping of a secret file named by ``reference`` (a file name or ``secret:NAME``), or
    None when the file is not a YAML mapping (the caller names the keys it expected). A missing
    file or secrets directory is a SecretError. The file's text never reaches a message."""
    import yaml

    name = reference_name(reference)
    try:
        data = yaml.safe_load(read_secret(config, name, environ, strip=False))
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def resolve_secret_ref(config, value, environ=None):
    """Return the secret for a ``secret:NAME`` value, other values unchanged."""
    if is_secret_ref(value):
        return read_secret(config, secret_name(value), environ)
    return value


def redact_url(text):
    """``text`` with the user-info of every URL in it replaced by ``***`` (https://***@host)."""
    return URL_USERINFO.sub("***@", str(text))


def mask_text(text, secret_values):
    """Replace every occurrence of every secret value (longest first), and URL user-info."""
    if not text:
        return text
    text = redact_url(text)
    for value in sorted({v for v in secret_values if isinstance(v, str) and len(v) >= 3}, key=len, reverse=True):
        text = text.replace(value, MASK)
    return text


def mask_params(params, secret_values=(), sensitive_names=()):
    """A copy of ``params`` where sensitive values are masked.

    A value is masked when its name is in ``sensitive_names``, when its name
    looks sensitive (password, token...) or when it contains a known secret
    value. ``secret:NAME`` references are kept: they reveal nothing.
    """
    sensitive_names = set(sensitive_names)

    def mask_value(name, value):
        if is_secret_ref(value):
            return value
        if name is not None and (name in sensitive_names or is_sensitive_name(name)):
            return MASK if value not in (None, "", [], {}) else value
        if isinstance(value, dict):
            return {k: mask_value(k, v) for k, v in value.items()}
        if isinstance(value, list):
            return [mask_value(None, v) for v in value]
        if isinstance(value, str):
            return mask_text(value, secret_values)
        return value

    return {k: mask_value(k, v) for k, v in (params or {}).items()}
