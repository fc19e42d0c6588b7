"""Strategies shared by the fuzz tests: names as an attacker or a careless colleague writes them,
and JSON-like trees."""

from hypothesis import strategies as st

# the segments that matter to a path check, and ordinary ones
SEGMENTS = st.sampled_from(["", ".", "..", "...", "a", "b", "settings.yaml", "exit_code", "C:", "c:x", "x\\y",
                            "n\x00l", "~", "é", " ", "000__a", "_previous"]) | st.text(min_size=1, max_size=6)
NAMES = st.one_of(
    st.lists(SEGMENTS, min_size=1, max_size=5).map("/".join),
    st.lists(SEGMENTS, min_size=1, max_size=3).map(lambda parts: "/" + "/".join(parts)),
    st.text(max_size=30),
)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20))
JSON = st.recursive(SCALARS, lambda children: st.lists(children, max_size=4)
                    | st.dictionaries(st.text(max_size=8), children, max_size=4), max_leaves=25)


def files_outside(root, everything):
    """The files of ``everything`` (a directory that holds ``root``) that are not under ``root``."""
    import os

    root = os.path.realpath(root)
    found = []
    for directory, _dirs, files in os.walk(everything):
        for name in files:
            path = os.path.realpath(os.path.join(directory, name))
            if not path.startswith(root + os.sep):
                found.append(path)
    return found
