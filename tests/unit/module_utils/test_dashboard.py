"""The long-term dashboard from the store alone: a page per workload, a row per stored test, its verdicts
marked, links to its run, configuration labels as filters, the machines in the header."""

import json
import os
import re

from ansible_collections.perfscale.topsail.plugins.module_utils import stores
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import dashboard
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base


def kpi(uuid, run, name, value, when, workload="perf_indicators", **labels):
    fields = {"indicator": "matmul", "size": 256, "dtype": "float32", "host_cpu_model": "EPYC", "run_id": run}
    fields.update(labels)
    fields.update(kpi_name=name, value=value, unit="GFLOP/s", higher_is_better=True,
                  ignored_for_regression=name.startswith("point_"), test_uuid=uuid, workload=workload,
                  test_path="%s/001__matbenchmarking/%s" % (run, uuid), artifacts_url="s3://perf/ci/%s" % run,
                  error=1.5 if name == "rate" else None)
    fields["@timestamp"] = when
    return base.kpi_document(fields)


def store_with_history(tmp_path):
    store = stores.open_store({"backend": "sqlite", "timeout_s": 5, "sqlite": {"path": str(tmp_path / "r.sqlite")}})
    documents = []
    for day in range(1, 6):
        when = "2026-11-%02dT10:00:00+00:00" % day
        for size in (256, 512):
            uuid = "t%d-%d" % (day, size)
            documents += [kpi(uuid, "run%d" % day, "rate", 100.0 - (20 if day == 5 else 0), when, size=size),
                          kpi(uuid, "run%d" % day, "point_max_rss", 80.0, when, size=size)]
    documents.append(kpi("l1", "run9", "ttft_p99", 0.2, "2026-11-06T10:00:00+00:00", workload="llm_load", model="m"))
    verdict = {"kind": "regression", "doc_id": base.doc_id("regression", "t5-256", "rate"), "test_uuid": "t5-256",
               "kpi_name": "rate", "verdict": "regression", "workload": "perf_indicators",
               "@timestamp": "2026-11-05T10:00:00+00:00"}
    store.ensure_schema(["indicator", "size", "dtype", "host_cpu_model", "run_id", "model", "test_path"])
    store.write(documents + [verdict])
    return store


def page_data(path):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    found = re.search(r"<script type='application/json' id='ex-data'>(.*?)</script>", text, re.S)
    return text, json.loads(found.group(1).replace("<\\/", "</"))


def test_a_page_per_workload_a_row_per_test_with_its_verdict_and_its_run(tmp_path):
    store = store_with_history(tmp_path)
    built = dashboard.build(store, str(tmp_path / "site"), regression_section={"machine_keys": ["host_cpu_model"]})
    assert sorted(built["pages"]) == ["llm_load", "perf_indicators"] and built["tests"] == 11
    assert os.path.exists(tmp_path / "site" / "plotly.min.js")
    with open(built["index"], encoding="utf-8") as handle:
        index = handle.read()
    assert "perf_indicators.html" in index and "10 test(s), 2 KPI(s)" in index
    text, data = page_data(str(tmp_path / "site" / built["pages"]["perf_indicators"]))
    rows = data["rows"]
    assert len(rows) == 10
    # time order, the KPI and its error, the verdict on its point, the run's artifacts as the link
    assert rows[0]["when"] == "2026-11-01T10:00:00Z" and rows[-1]["when"] == "2026-11-05T10:00:00Z"
    marked = [r for r in rows if r.get("rate__verdict") == "regression"]
    assert [(r["size"], r["rate"]) for r in marked] == [(256, 80.0)]
    assert rows[0]["rate__error"] == 1.5 and rows[0]["link"] == "s3://perf/ci/run1"
    # the KPIs ignored for regression come after the others; "when" is the first axis
    assert list(data["kpis"]) == ["rate", "point_max_rss"] and data["dimensions"][0] == "when"
    # configuration labels are filters, the time is not
    assert "data-dim='size'" in text and "data-dim='when'" not in text
    assert "machines (host_cpu_model): EPYC (10 test(s))" in text and "1 change(s) marked" in text
    assert 'href="index.html"' in text


def test_an_empty_store_gives_an_index_that_says_so(tmp_path):
    store = stores.open_store({"backend": "sqlite", "timeout_s": 5, "sqlite": {"path": str(tmp_path / "e.sqlite")}})
    built = dashboard.build(store, str(tmp_path / "site"))
    assert built["pages"] == {} and "holds no KPI yet" in open(built["index"], encoding="utf-8").read()
