"""History look-ups of a run's regression step, against a store of 100,000 documents.

The run: ENTRIES entries (matrix points) x 2 KPIs = 2,000 history look-ups, the shape
of `benchmark.yml` with 1,000 points. The store: DOCUMENTS KPI documents of the same
workload (SERIES label combinations x runs x 2 KPIs), the current entries' series among
them. Side by side in one run, ROUNDS rounds, medians:

  sqlite batched     - one history_batch call for the run (what the regression step does)
  sqlite one by one  - the same look-ups as 2,000 history() calls (a batch of one each)
  opensearch batched / one by one - the same, against osmem-server (in-memory,
                       OpenSearch-compatible, the real opensearch-py client), with the
                       number of HTTP requests each way
  analyse            - the whole verdict computation (regression.verdicts.analyse) of
                       the run on SQLite: look-ups, change-point tests, records

The first look-up with a new set of ignored labels builds SQLite's history-key index
once (timed apart: "index_build_s"). Goal: <= 5 s for the run's look-ups on SQLite.
"""

import os
import tempfile
import time

import _common
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils import stores
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import verdicts
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base

ENTRIES = int(os.environ.get("ENTRIES", "1000"))
DOCUMENTS = int(os.environ.get("DOCUMENTS", "100000"))
# osmem-server answers a term query by scanning its documents (~45 ms per query at 10,000
# documents here, where OpenSearch would use its index): its store is smaller, and its
# meaningful figure is the number of HTTP requests, batched or not
OPENSEARCH_DOCUMENTS = int(os.environ.get("OPENSEARCH_DOCUMENTS", "10000"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
OPENSEARCH_ROUNDS = int(os.environ.get("OPENSEARCH_ROUNDS", "1"))
KPIS = ("rate", "time_median")
IGNORE = ["collection_version", "library_version", "test_path", "run_id", "git_commit", "hostname", "presets"]


def labels_of(series):
    return {"indicator": "matmul", "dtype": ("float32", "float64")[series % 2], "size": 64 * (1 + series // 2),
            "threads": 1 + series % 4, "cpu_model": "bench cpu", "cpu_count": 2, "backend": "numpy",
            "collection_version": "0.1.0", "library_version": "2.4", "test_path": "run/%d" % series,
            "run_id": "r", "git_commit": None, "hostname": "h", "presets": "cpu_smoke"}


def documents(count):
    series_count = max(ENTRIES, 1)
    runs = max(count // (series_count * len(KPIS)), 1)
    for run in range(runs):
        for series in range(series_count):
            for kpi in KPIS:
                record = dict(labels_of(series), kpi_name=kpi, value=100.0 + run % 7, unit="x", higher_is_better=True,
                              ignored_for_regression=False, test_uuid="u-%d-%d" % (run, series), workload="w")
                record["@timestamp"] = 1_700_000_000 + run * 3600
                yield base.kpi_document(record)


def queries():
    return [base.HistoryQuery("w", kpi, labels_of(series), exclude_test_uuid="current-%d" % series)
            for series in range(ENTRIES) for kpi in KPIS]


def fill(store, count):
    batch = []
    for document in documents(count):
        batch.append(document)
        if len(batch) == 5000:
            store.write(batch)
            batch = []
    if batch:
        store.write(batch)


def timed(function):
    started = time.perf_counter()
    value = function()
    return time.perf_counter() - started, value


class CountingTransport:
    """Counts the HTTP requests of an opensearch-py client."""

    def __init__(self, client):
        self.count = 0
        original = client.transport.perform_request

        def perform_request(*args, **kwargs):
            self.count += 1
            return original(*args, **kwargs)

        client.transport.perform_request = perform_request


def payloads():
    result = []
    for series in range(ENTRIES):
        labels = labels_of(series)
        result.append({"metadata": {"test_path": "current/%d" % series, "test_uuid": "current-%d" % series,
                                    "timestamp": "2030-01-01T00:00:00+00:00", "exit_code": 0},
                       "labels": labels,
                       "kpis": {kpi: {"value": 100.0, "unit": "x", "help": "", "higher_is_better": True,
                                      "ignored_for_regression": False} for kpi in KPIS}})
    return result


def main():
    from osmem_server import OsmemServer

    wanted = queries()
    out = {"entries": ENTRIES, "kpis": len(KPIS), "lookups": len(wanted), "documents": DOCUMENTS, "rounds": ROUNDS,
           "opensearch_rounds": OPENSEARCH_ROUNDS}
    with tempfile.TemporaryDirectory() as tmp:
        export = {"backend": "sqlite", "timeout_s": 60, "sqlite": {"path": os.path.join(tmp, "h.sqlite")}}
        sqlite = stores.open_store(export)
        sqlite.ensure_schema()
        out["sqlite_fill_s"], _ = timed(lambda: fill(sqlite, DOCUMENTS))
        out["sqlite_documents"] = sqlite.count()
        out["index_build_s"], first = timed(lambda: sqlite.history_batch(wanted[:1], IGNORE))
        out["history_points_per_lookup"] = len(first[0])
        with OsmemServer.start() as server:
            opensearch = stores.open_store({"backend": "opensearch", "timeout_s": 120, "opensearch": {
                "hosts": [server.url], "index_prefix": "bench-", "verify_certs": False, "ca_file": None,
                "credentials_file": None, "max_retries": 1, "chunk_size": 5000}})
            opensearch.ensure_schema(list(labels_of(0)))
            out["opensearch_fill_s"], _ = timed(lambda: fill(opensearch, OPENSEARCH_DOCUMENTS))
            out["opensearch_documents"] = opensearch.count()
            counter = CountingTransport(opensearch.client)
            rounds = {name: [] for name in ("sqlite_batched", "sqlite_one_by_one", "opensearch_batched",
                                            "opensearch_one_by_one", "analyse_sqlite")}
            # the regression section as a run reads it (validated, defaults filled in)
            section = config_schema.read_section({"regression": {
                "method": "edivisive", "comparison_keys": IGNORE[:2], "ignored_keys": IGNORE[2:], "sorting_keys": [],
                "options": {"edivisive": {"window": 10, "max_pvalue": 0.001, "min_magnitude": 0.02}}}}, "regression")
            settings = verdicts.effective_settings(section, {})
            for _round in range(ROUNDS):
                seconds, batched = timed(lambda: sqlite.history_batch(wanted, IGNORE))
                rounds["sqlite_batched"].append(seconds)
                seconds, singles = timed(lambda: [sqlite.history(q.workload, q.kpi_name, q.labels, IGNORE,
                                                                 q.exclude_test_uuid) for q in wanted])
                rounds["sqlite_one_by_one"].append(seconds)
                assert batched == singles
                seconds, _ = timed(lambda: verdicts.analyse(payloads(), sqlite, settings, "w"))
                rounds["analyse_sqlite"].append(seconds)
            for _round in range(OPENSEARCH_ROUNDS):
                counter.count = 0
                seconds, os_batched = timed(lambda: opensearch.history_batch(wanted, IGNORE))
                rounds["opensearch_batched"].append(seconds)
                out["opensearch_batched_requests"] = counter.count
                counter.count = 0
                seconds, os_singles = timed(lambda: [opensearch.history(q.workload, q.kpi_name, q.labels, IGNORE,
                                                                        q.exclude_test_uuid) for q in wanted])
                rounds["opensearch_one_by_one"].append(seconds)
                out["opensearch_one_by_one_requests"] = counter.count
                assert os_batched == os_singles
            opensearch.close()
        sqlite.close()
    out["rounds_s"] = rounds
    out["median_s"] = {name: _common.median(values) for name, values in rounds.items()}
    out["sqlite_one_by_one_over_batched"] = out["median_s"]["sqlite_one_by_one"] / out["median_s"]["sqlite_batched"]
    out["opensearch_one_by_one_over_batched"] = (out["median_s"]["opensearch_one_by_one"]
                                                 / out["median_s"]["opensearch_batched"])
    out["goal_sqlite_s"] = 5
    _common.record("history_lookup", out)


if __name__ == "__main__":
    main()
