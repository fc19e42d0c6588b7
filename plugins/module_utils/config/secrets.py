# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets are referenced, never copied.

The configuration names an environment variable (``secrets.dir_env``) that
points at a secrets directory. A configuration value ``secret:NAME`` refers to
the file ``NAME`` in that directory. The value is read when it is used, is
never written into the effective configuration, and every value read can be
masked out of text before the text is written anywhere.

A secret file holds ONE value (``one_value``): whitespace around it and a final newline are fine, a
second non-empty line (a comment, a rotated token) or a control character is refused by the
secret's name and path, without any of its content. Only a mapping secret (YAML,
``read_secret_mapping``) and the ``secret`` lookup read a file of several lines.

Every HTTP client of the collection runs its calls under a ``SecretMask`` (``guard``): an error
raised inside, whatever its type, leaves with every form of the client's secrets (as they are, URL-
and JSON-encoded, base64 as in Basic auth, escaped as in a ``repr``) masked; a header value with a
line break is refused before ``http.client`` sees it (``header_problem``), and credentials travel only
over https:// or to a loopback host (``cleartext_problem``).

Standard library only: ``transfer/s3_client.py`` loads this file by its path in a user pod.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import ipaddress
import json
import os
import re
import urllib.parse

try:
    from ansible_collections.perfscale.topsail.plugins.module_utils.errors import SecretError
except ImportError:  # loaded by path (a user pod's S3 client): no package to import
    class SecretError(Exception):
        """A secret cannot be resolved (the message never contains its value)."""

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


def one_value(text, what):
    """The single value ``text`` holds (whitespace around it dropped), or a ``SecretError`` naming
    ``what`` (the secret and its file) when it holds a second non-empty line or a control
    character; the message never shows any of the text."""
    value = text.strip()
    lines = [line for line in value.splitlines() if line.strip()]
    if len(lines) > 1:
        raise SecretError("%s: holds %d non-empty lines; expected one value on one line (a comment or a second "
                          "value does not belong in a secret file)" % (what, len(lines)))
    if any(ord(char) < 32 and char != "\t" or ord(char) == 127 for char in value):
        raise SecretError("%s: holds a control character; expected one value of printable characters" % what)
    return value


def read_secret(config, name, environ=None, strip=True, single=True):
    """Read the secret file ``name`` from the secrets directory: one value (``one_value``) unless
    ``single`` is false (a mapping, a properties file: the text as it is, stripped when asked)."""
    path = secret_path(config, name, environ)
    try:
        with open(path, encoding="utf-8") as handle:
            value = handle.read()
    except OSError as exc:
        raise SecretError("secret '%s': cannot be read from the secrets directory: %s" % (name, exc.strerror or exc)) from None
    except ValueError:
        raise SecretError("secret '%s' (file %s): is not UTF-8 text; expected a UTF-8 text file"
                          % (name, path)) from None
    if single:
        return one_value(value, "secret '%s' (file %s)" % (name, path))
    return value.strip() if strip else value


def reference_name(reference):
    """The secret file a setting names: ``NAME`` or ``secret:NAME``."""
    return secret_name(reference) if is_secret_ref(reference) else reference


def read_referenced_secret(config, reference, environ=None):
    """The secret file a setting names (``NAME`` or ``secret:NAME``), stripped."""
    return read_secret(config, reference_name(reference), environ)


def read_secret_mapping(config, reference, environ=None, one_value_keys=()):
    """The YAML mapping of a secret file named by ``reference`` (a file name or ``secret:NAME``), or
    None when the file is not a YAML mapping (the caller names the keys it expected). A missing
    file or secrets directory is a SecretError. The file's text never reaches a message. Each text
    value of ``one_value_keys`` (keys, passwords) must be one value (``one_value``: a block of
    several lines is refused by the secret's name, file and key) and comes back stripped."""
    import yaml

    name = reference_name(reference)
    try:
        data = yaml.safe_load(read_secret(config, name, environ, strip=False, single=False))
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    for key in one_value_keys:
        if isinstance(data.get(key), str):
            where = "secret '%s' (file %s): key %s" % (name, secret_path(config, name, environ), key)
            data[key] = one_value(data[key], where)
    return data


def resolve_secret_ref(config, value, environ=None):
    """Return the secret for a ``secret:NAME`` value, other values unchanged."""
    if is_secret_ref(value):
        return read_secret(config, secret_name(value), environ)
    return value


def redact_url(text):
    """``text`` with the user-info of every URL in it replaced by ``***`` (https://***@host)."""
    return URL_USERINFO.sub("***@", str(text))


def mask_text(text, secret_values):
    """Replace every occurrence of every secret value (longest first, in each of its forms: see
    ``SecretMask``), and URL user-info."""
    return SecretMask(secret_values).mask(text)


# shorter values are not masked (a 1- or 2-character "secret" would mask every word holding it)
MIN_SECRET_LENGTH = 3
# the attributes some exceptions print instead of their args (OSError, UnicodeError, HTTP errors); the
# attributes of an exception's own __dict__ (S3Error's code) are masked too
_TEXT_ATTRIBUTES = ("strerror", "filename", "filename2", "reason", "msg", "message", "error", "info", "body")


def _forms(value):
    """Every way ``value`` can be written into a message: as it is, each of its lines, URL-encoded
    (path and form), JSON-escaped, escaped as in a ``repr`` of text or bytes, base64."""
    forms = {value}
    forms.update(line.strip() for line in value.splitlines())
    forms.update((urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value), json.dumps(value)[1:-1],
                  repr(value)[1:-1], repr(value.encode("utf-8"))[2:-1],
                  base64.b64encode(value.encode("utf-8")).decode("ascii")))
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


class SecretMask:
    """The secret values a client was given, masked out of any text or error that leaves it.

    ``SecretMask(values, basic=[(user, password)])``: ``mask(text)``, ``holds(text)`` and
    ``guard(error)``, a context in which any exception whose text holds a secret is raised again
    with its text masked (its type kept when it is one of ``keep``, else ``error(one line)``).
    ``bool(mask)`` is false when there is nothing to mask.
    """

    def __init__(self, values=(), basic=()):
        self._forms = set()
        self._ordered = []
        for value in values:
            self.add(value)
        for user, password in basic:
            self.add_basic(user, password)

    def add(self, value):
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        if isinstance(value, str) and len(value.strip()) >= MIN_SECRET_LENGTH:
            self._forms.update(_forms(value))
            self._forms.update(_forms(value.strip()))
        self._ordered = sorted(self._forms, key=len, reverse=True)

    def add_basic(self, user, password):
        """A Basic-auth pair: the password, and ``user:password`` (as the header's base64 carries it)."""
        self.add(password)
        if password:
            self.add("%s:%s" % (user or "", password))

    def __bool__(self):
        return bool(self._forms)

    @property
    def longest(self):
        """Length of the longest form: text cut after masking keeps nothing of a secret across the cut
        when this much more was masked first."""
        return len(self._ordered[0]) if self._ordered else 0

    def holds(self, text):
        return any(form in text for form in self._forms)

    def mask(self, text):
        """``text`` with every form of every secret replaced by ``MASK``, and URL user-info redacted."""
        if not text:
            return text
        text = redact_url(text)
        for form in self._ordered:
            text = text.replace(form, MASK)
        return text

    def _masked(self, value):
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, (bytes, bytearray)):
            return self.mask(bytes(value).decode("utf-8", "replace")).encode("utf-8")
        if isinstance(value, dict):
            return {self._masked(k): self._masked(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self._masked(v) for v in value)
        if isinstance(value, BaseException):   # the cause an error carries (opensearch-py's ConnectionError)
            return self.masked_error(value, RuntimeError, keep=(BaseException,))
        return value

    def _clean(self, exc):
        return not self.holds(str(exc)) and not self.holds(repr(exc))

    def masked_error(self, exc, error, keep=()):
        """``exc`` itself when its text holds no secret; else a copy of it (when it is one of ``keep``)
        with its arguments and text attributes masked, or ``error(one line, masked)``."""
        if self._clean(exc):
            return exc
        if isinstance(exc, keep):
            try:
                masked = copy.copy(exc)
                masked.args = self._masked(exc.args)
            except (TypeError, ValueError, AttributeError):
                masked = None
            names = set(_TEXT_ATTRIBUTES) | set(getattr(masked, "__dict__", {})) if masked is not None else ()
            for name in sorted(names):
                value = getattr(masked, name, None)
                if isinstance(value, (str, bytes, dict, list)):
                    try:
                        setattr(masked, name, self._masked(value))
                    except (AttributeError, TypeError):
                        pass   # a property read from the args, masked with them (checked below)
            if masked is not None and self._clean(masked):
                return masked
        return error(" ".join(self.mask(str(exc) or type(exc).__name__).split()))

    @contextlib.contextmanager
    def guard(self, error, keep=()):
        """Run the block; any exception leaving it leaves masked (``masked_error``). Nothing is
        swallowed: the same failure is raised, only its text changes."""
        try:
            yield self
        except Exception as exc:  # pylint: disable=broad-except  # noqa: B902 - raised again, masked
            masked = self.masked_error(exc, error, keep)
            if masked is exc:
                raise
            raise masked from None

    def wrap(self, target, error, keep=(Exception,)):
        """``target`` (a client object) whose method calls, and those of its namespaces
        (``client.indices.create``), run under ``guard(error, keep)``."""
        return _Guarded(target, self, error, keep)


class _Guarded:
    _PLAIN = (str, bytes, int, float, bool, type(None), dict, list, tuple, set)

    def __init__(self, target, mask, error, keep):
        self._target, self._mask, self._error, self._keep = target, mask, error, keep

    def __getattr__(self, name):
        value = getattr(self._target, name)
        if callable(value):
            def call(*args, **kwargs):
                with self._mask.guard(self._error, self._keep):
                    return value(*args, **kwargs)
            return call
        if isinstance(value, self._PLAIN) or name.startswith("_"):
            return value
        return _Guarded(value, self._mask, self._error, self._keep)


def header_problem(value, what):
    """A header value with a line break or a NUL (``http.client`` would refuse it with the value in
    its message, or a server read a second header): one line naming ``what``, or None."""
    if isinstance(value, str) and any(char in value for char in "\r\n\0"):
        return "%s: holds a line break or a NUL character; expected one line (the value is not shown)" % what
    return None


def is_loopback(host):
    """127.0.0.0/8, ::1 (also IPv4-mapped) and ``localhost``."""
    host = (host or "").strip("[]").lower().rstrip(".")
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or bool(mapped and mapped.is_loopback)


def cleartext_problem(url, setting, what="credentials"):
    """None when ``url`` may carry ``what`` (https://, or a loopback host); else one line naming
    ``setting`` and the URL (its user-info redacted). A URL without a scheme is plain http."""
    text = str(url or "")
    parts = urllib.parse.urlsplit(text if "://" in text else "http://" + text)
    if parts.scheme == "https" or is_loopback(parts.hostname):
        return None
    return ("%s %s: %s are only sent over https:// (or to a loopback host: 127.0.0.0/8, ::1, localhost), never in "
            "clear over %s://; expected an https:// URL" % (setting, redact_url(text), what, parts.scheme))


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
