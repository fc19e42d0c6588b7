"""Fuzz: what a Horreum server (or whatever answers at export.horreum.url) says to the export. Whatever
it answers, a write is delivered, rejected with a one-line reason or a StoreError in one line; never
another exception, never the API key."""

import os
import sys

from hypothesis import example, given, strategies as st

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_strategies import JSON  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import StoreError  # noqa: E402
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.horreum import HorreumStore  # noqa: E402

API_KEY = "HUSR_00000000_0000_fuzz_key_0000"


class Answers:
    """Stands in for the store's JSON HTTP client: a test, then run listings, then the upload's answer."""

    def __init__(self, test, listings, upload):
        self.test, self.listings, self.upload = test, list(listings), upload

    def request(self, method, path, body=None, params=None):
        if path.startswith("/api/test/byName/"):
            return 200, {}, self.test
        if path.startswith("/api/run/list/"):
            return 200, {}, self.listings.pop(0) if self.listings else {"runs": [], "total": 0}
        return 200, {}, self.upload


DESCRIPTION = st.one_of(st.just("perfscale.topsail run r1"), st.text(max_size=8), JSON)
RUN = st.one_of(st.fixed_dictionaries({"description": DESCRIPTION, "id": JSON}), JSON)
LISTING = st.one_of(st.fixed_dictionaries({"runs": st.one_of(st.lists(RUN, max_size=3), JSON),
                                           "total": st.one_of(st.integers(-5, 10 ** 6), st.text(max_size=5), JSON)}),
                    JSON)
TEST = st.one_of(st.fixed_dictionaries({"id": st.integers(0, 99)}),
                 st.fixed_dictionaries({"id": st.one_of(st.text(max_size=4), JSON)}), JSON)
FULL_PAGE = st.fixed_dictionaries({"runs": st.lists(RUN, min_size=100, max_size=100),
                                   "total": st.one_of(st.integers(-5, 10 ** 6), st.text(max_size=5), JSON)})


@given(test=TEST, listings=st.lists(st.one_of(LISTING, FULL_PAGE), max_size=3), upload=JSON)
@example(test={"id": 1}, listings=[{"runs": [[1, 2]], "total": 1}], upload={})
@example(test={"id": 1}, listings=[{"runs": [{"description": "x"}] * 100, "total": "abc"}], upload={})
def test_horreum_answers(test, listings, upload):
    store = HorreumStore("https://horreum.invalid", "perfscale-demo", API_KEY)
    store.http = Answers(test, listings, upload)
    documents = [{"kind": "kpi", "run_id": "r1", "test_uuid": "u1", "kpi_name": "rate", "value": 1.0,
                  "@timestamp": "2026-11-22T10:00:00+00:00"},
                 {"kind": "kpi", "run_id": "r2", "test_uuid": "u2", "kpi_name": "rate", "value": 2.0,
                  "@timestamp": "2026-11-22T11:00:00+00:00"}]
    try:
        result = store.write(documents)
    except StoreError as exc:
        assert str(exc) and "\n" not in str(exc) and API_KEY not in str(exc), repr(exc)
        return
    assert len(result.delivered) + len(result.rejected) == len(documents)
    for _document, reason in result.rejected:
        assert "\n" not in reason and API_KEY not in reason
