"""Fuzz: the image references a pod names, as kubesim's kubelet parses them before pulling.

Whatever text a client writes as a container's image (kubesim's port is open to any local process),
``valid_image`` answers True or False, never an exception, in time linear in its length; every
reference built from distribution/reference's grammar is accepted, and a reference with an empty
tag or a doubled colon (``app::1.0``, the corpus's InvalidImageName) is refused.
"""

import os
import sys
import time

from hypothesis import given, strategies as st

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)

from kubesim.controllers.pods import valid_image  # noqa: E402  pylint: disable=wrong-import-position

COMPONENT = st.from_regex(r"[a-z0-9]{1,8}(?:[._-][a-z0-9]{1,8}){0,2}", fullmatch=True)
DOMAIN = st.from_regex(r"[a-z0-9]{1,8}(?:\.[a-z0-9]{1,8}){1,2}(?::[0-9]{2,5})?", fullmatch=True)
TAG = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}", fullmatch=True)
DIGEST = st.from_regex(r"sha256:[0-9a-f]{64}", fullmatch=True)


@st.composite
def references(draw):
    name = "/".join(draw(st.lists(COMPONENT, min_size=1, max_size=3)))
    if draw(st.booleans()):
        name = draw(DOMAIN) + "/" + name
    if draw(st.booleans()):
        name += ":" + draw(TAG)
    if draw(st.booleans()):
        name += "@" + draw(DIGEST)
    return name


@given(st.text(max_size=300))
def test_any_image_text_is_answered_true_or_false(text):
    assert valid_image(text) in (True, False)


@given(references())
def test_references_of_the_grammar_are_accepted(reference):
    assert valid_image(reference), reference


@given(references())
def test_an_empty_tag_or_a_doubled_colon_is_refused(reference):
    name = reference.split("@", 1)[0].rsplit(":", 1)[0] if ":" in reference.split("/")[-1] else reference.split("@")[0]
    assert not valid_image(name + "::1.0")
    assert not valid_image(name + ":")


def test_long_hostile_references_are_answered_quickly():
    for text in ("a" * 200000 + "!", "a-" * 100000 + "!", "a." * 100000 + "!", ("ab/" * 60000) + ":"):
        started = time.monotonic()
        assert valid_image(text) is False
        assert time.monotonic() - started < 2.0, text[:20]
    assert not valid_image("a" * 256)          # a repository name longer than 255 characters
    assert valid_image("a" * 255 + ":" + "t" * 128)
