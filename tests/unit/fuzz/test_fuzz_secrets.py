"""Fuzz: what a secret file holds. Whatever its contents, reading it gives one value or one line that
names the secret and its file and holds none of the file's lines (unless the file is that one value)."""

import os
import tempfile

from hypothesis import given, strategies as st

from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import SecretError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import client as llm_client
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import ConfigError

LINES = st.one_of(st.text(max_size=40),
                  st.sampled_from(["ghp_0123456789abcdef", "# rotated 2024-05", "", "  ", "\t", "old-token-value"]))
SEPARATORS = st.sampled_from(["\n", "\r\n", "\r", "\n\n", "\x0b", "\x85", "\u2028"])
CONTENTS = st.one_of(st.binary(max_size=80),
                     st.tuples(st.lists(LINES, min_size=1, max_size=5), SEPARATORS).map(
                         lambda parts: parts[1].join(parts[0]).encode("utf-8")))
# words of the refusals themselves: a line that is one of them says nothing of the file
REFUSAL_WORDS = ("secret 'token' (file ): holds non-empty lines; expected one value on one line (a comment or a second "
                 "value does not belong in a secret file) a control character of printable characters is not UTF-8 "
                 "text a UTF-8 text file --token-file the token must be one word on the first line is empty 0123456789")


def check(message, path, raw, value=None):
    assert message and "\n" not in message and "\r" not in message, repr(message)
    assert path in message
    text = raw.decode("utf-8", "replace")
    for line in text.splitlines():
        line = line.strip()
        if len(line) >= 4 and line != value and line not in REFUSAL_WORDS + path:
            assert line not in message.replace(path, ""), (line, message)


@given(raw=CONTENTS)
def test_secret_files(raw):
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "token")
        with open(path, "wb") as handle:
            handle.write(raw)
        try:
            value = secret_refs.read_secret({}, "token", {"PERFSCALE_SECRETS_DIR": directory})
        except SecretError as exc:
            check(str(exc), path, raw)
        else:
            # the one value: no line break, no control character, what the file holds without its whitespace
            assert value == value.strip() and not any(ord(c) < 32 and c != "\t" for c in value)
            assert len([line for line in raw.decode("utf-8").splitlines() if line.strip()]) <= 1
        try:
            token = llm_client.read_token_file(path)
        except ConfigError as exc:
            check(str(exc), path, raw)
        else:
            assert token and token == token.strip() and not any(c.isspace() for c in token)
