"""A store that dies in the middle of an export costs one chunk's retries, not one per chunk."""

from opensearchpy import exceptions

from ansible_collections.perfscale.topsail.plugins.module_utils.stores import export as ex
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base
from ansible_collections.perfscale.topsail.plugins.module_utils.stores.opensearch import OpenSearchStore


class DyingClient:
    """Takes the first bulk request, then stops answering (every call times out)."""

    def __init__(self):
        self.bulk_calls = 0

    def bulk(self, body, **_kwargs):
        self.bulk_calls += 1
        if self.bulk_calls > 1:
            raise exceptions.ConnectionTimeout("TIMEOUT", "read timed out", None)
        return {"items": [{"index": {"status": 201}} for _line in body[::2]]}

    def close(self):
        pass


def documents(count):
    return [base.kpi_document({"test_uuid": "u%d" % i, "kpi_name": "rate", "value": 1.0, "@timestamp": 0,
                               "workload": "w"}) for i in range(count)]


def test_after_the_first_exhausted_chunk_nothing_more_is_tried():
    client = DyingClient()
    store = OpenSearchStore(["http://127.0.0.1:9"], chunk_size=500, max_retries=3, backoff=0, client=client)
    result = store.write(documents(10_000))
    # one chunk delivered, the next one tried 1 + 3 times, the 18 others never sent
    assert client.bulk_calls == 1 + 4
    assert len(result.delivered) == 500
    assert len(result.rejected) == 9_500
    assert result.gave_up.startswith("opensearch http://127.0.0.1:9 stopped answering after 4 tries")
    assert sum(1 for _doc, why in result.rejected if why.startswith("not sent: ")) == 9_000


def test_a_store_that_stopped_answering_is_not_tried_again_in_the_same_export(monkeypatch, tmp_path):
    calls = []

    def dead(documents, export, config=None, label_fields=(), environ=None):
        calls.append(len(documents))
        return ex.Delivery([], list(documents), "opensearch x: timed out", "opensearch x", unreachable=True)

    monkeypatch.setattr(ex, "deliver", dead)
    exporter = ex.Exporter(environ={})
    export = {"backend": "opensearch", "timeout_s": 1,
              "opensearch": {"hosts": ["http://x:9200"], "index_prefix": "p-"}}
    first = exporter.deliver(documents(3), export)
    second = exporter.deliver(documents(2), export)
    assert calls == [3]
    assert first.unreachable and second.unreachable and len(second.undelivered) == 2
    assert second.reason == "not sent: opensearch x stopped answering earlier in this export"
