"""Text from outside printed on one line (module_utils/display_text.py): control characters escaped,
long text cut."""

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import display_text


@pytest.mark.parametrize("raw, shown", [
    ("run-4d92666d", "run-4d92666d"),
    ("a\x1b[2Jb", "a\\x1b[2Jb"),
    ("line\r\nforged", "line\\x0d\\x0aforged"),
    ("\x00\x07\x7f\x85\x9b", "\\x00\\x07\\x7f\\x85\\x9b"),
    ("x\u2028y\u2029z", "x\\u2028y\\u2029z"),
    ("\u202etxt.exe\u2066\u2069", "\\u202etxt.exe\\u2066\\u2069"),
    ("caf\u00e9 \u00a0\u4e2d", "caf\u00e9 \u00a0\u4e2d"),  # printable non-ASCII stays as it is
    (42, "42"),
    (None, "None"),
])
def test_control_characters_are_shown_as_escapes(raw, shown):
    assert display_text.escape(raw) == shown


def test_long_text_is_cut_after_the_limit_and_says_how_much_is_left():
    assert display_text.escape("a" * 300) == "a" * 256 + "...(44 more characters)"
    assert display_text.escape("\x1b" * 5, max_chars=2) == "\\x1b\\x1b...(3 more characters)"


def test_a_number_too_long_to_convert_is_named_not_raised():
    assert display_text.escape(10 ** 5000) == "(a number too long to show)"
