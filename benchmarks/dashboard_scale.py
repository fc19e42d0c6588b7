"""The long-term dashboard at scale: a SQLite store of DOCUMENTS KPI documents (100,000 by default:
SERIES label combinations x runs x 5 KPIs, with a regression verdict every 50 runs), the dashboard built
from it. ROUNDS builds, medians: the build time (reading the store included) and each part apart
(reading every document; building and writing the pages), and the page weight (the workload's page,
its data inside, and plotly.min.js beside it, which the browser caches).

Goal: a 100,000-document store builds in under 60 s on 2 cores and its page stays under 20 MB.
"""

import os
import tempfile
import time

import _common
from ansible_collections.perfscale.topsail.plugins.module_utils import stores
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import dashboard
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base

DOCUMENTS = int(os.environ.get("DOCUMENTS", "100000"))
SERIES = int(os.environ.get("SERIES", "40"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
KPIS = ("rate", "rate_best", "time_median", "time_cv", "point_duration")
GOALS = {"build_s": 60.0, "page_mib": 20.0}


def labels_of(series):
    return {"indicator": ("matmul", "conv2d")[series % 2], "dtype": ("float32", "float64")[series // 2 % 2],
            "size": 64 * (1 + series // 4), "cpu_model": "bench cpu", "cpu_count": 2, "backend": "numpy",
            "collection_version": "0.4.%d" % (series % 3), "library_version": "2.4"}


def documents(count):
    runs = max(count // (SERIES * len(KPIS)), 1)
    for run in range(runs):
        for series in range(SERIES):
            uuid = "u-%d-%d" % (run, series)
            for kpi in KPIS:
                record = dict(labels_of(series), kpi_name=kpi, value=100.0 + (run % 13) + series, unit="x",
                              higher_is_better=kpi.startswith("rate"), ignored_for_regression=kpi != "rate",
                              test_uuid=uuid, workload="perf_indicators", run_id="run-%d" % run,
                              test_path="run-%d/001__matbenchmarking/%03d" % (run, series),
                              artifacts_url="s3://perf/ci/run-%d" % run, error=1.5 if kpi == "rate" else None)
                record["@timestamp"] = 1_760_000_000 + run * 3600
                yield base.kpi_document(record)
            if run % 50 == 49:
                yield {"kind": "regression", "doc_id": base.doc_id("regression", uuid, "rate"), "test_uuid": uuid,
                       "kpi_name": "rate", "verdict": "regression", "workload": "perf_indicators",
                       "@timestamp": 1_760_000_000 + run * 3600}


def main():
    directory = tempfile.mkdtemp(prefix="perfscale-dashboard-")
    store = stores.open_store({"backend": "sqlite", "timeout_s": 60,
                               "sqlite": {"path": os.path.join(directory, "results.sqlite")}})
    store.ensure_schema(list(labels_of(0)) + ["run_id", "test_path"])
    batch = []
    for document in documents(DOCUMENTS):
        batch.append(document)
        if len(batch) == 5000:
            store.write(batch)
            batch = []
    store.write(batch)
    stored = store.count("kpi")
    builds, reads, pages = [], [], []
    for round_ in range(ROUNDS):
        started = time.perf_counter()
        read = sum(1 for _document in store.documents("kpi"))
        reads.append(time.perf_counter() - started)
        started = time.perf_counter()
        built = dashboard.build(store, os.path.join(directory, "site-%d" % round_))
        builds.append(time.perf_counter() - started)
        page = os.path.join(directory, "site-%d" % round_, built["pages"]["perf_indicators"])
        pages.append(os.path.getsize(page))
        assert read == stored and built["values"] == stored, (read, built["values"], stored)
    plotly = os.path.getsize(os.path.join(directory, "site-0", "plotly.min.js"))
    result = {"documents": stored, "tests": built["tests"], "rounds": ROUNDS,
              "build_s_median": round(_common.median(builds), 3), "read_all_s_median": round(_common.median(reads), 3),
              "page_mib": round(_common.median(pages) / 2 ** 20, 2), "plotly_js_mib": round(plotly / 2 ** 20, 2),
              "load_average": os.getloadavg()[0], "goals": GOALS}
    result["goals_met"] = {"build_s": result["build_s_median"] <= GOALS["build_s"],
                           "page_mib": result["page_mib"] <= GOALS["page_mib"]}
    _common.record("dashboard_scale", result)


if __name__ == "__main__":
    main()
