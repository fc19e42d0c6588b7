"""The long-term dashboard from the store alone: a page per workload, a row per stored test, its verdicts
marked, links to its run, configuration labels as filters, the machines in the header."""

import html
import json
import os
import re
import sys

import pytest

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
    # time order, the KPI and its error, the verdict on its point, the run's artifacts (an s3:// URL: text
    # on hover, not a link a click opens)
    assert rows[0]["when"] == "2026-11-01T10:00:00Z" and rows[-1]["when"] == "2026-11-05T10:00:00Z"
    marked = [r for r in rows if r.get("rate__verdict") == "regression"]
    assert [(r["size"], r["rate"]) for r in marked] == [(256, 80.0)]
    assert rows[0]["rate__error"] == 1.5 and rows[0]["artifacts"] == "s3://perf/ci/run1" and "link" not in rows[0]
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


# --------------------------------------------------------------------------
# the store is data (docs/security.md): it never names code, a bad document fails alone, links are checked


def raw_document(store, text, doc_id, kind="kpi"):
    """A document as anyone who can write to a shared SQLite file may store it: any text."""
    store.connection.execute("INSERT INTO documents (doc_id, kind, workload, kpi_name, test_uuid, ts, labels, "
                             "document) VALUES (?, ?, NULL, NULL, NULL, 0, '{}', ?)", (doc_id, kind, text))


def one_store(tmp_path, *documents):
    store = stores.open_store({"backend": "sqlite", "timeout_s": 5, "sqlite": {"path": str(tmp_path / "d.sqlite")}})
    store.ensure_schema([])
    store.write(list(documents))
    return store


def notes_of(path):
    with open(path, encoding="utf-8") as handle:
        return [html.unescape(note) for note in re.findall(r"<p class='note' id='note-\d+'>(.*?)</p>", handle.read())]


def test_a_workload_a_stored_document_names_is_never_imported(tmp_path, monkeypatch):
    monkeypatch.delitem(sys.modules, "this", raising=False)
    store = one_store(tmp_path, kpi("u1", "run1", "rate", 1.0, "2026-11-01T10:00:00+00:00", workload="this"))
    built = dashboard.build(store, str(tmp_path / "site"), regression_section={"comparison_keys": ["size"]})
    assert "this" not in sys.modules
    # the page is still there, with the configuration's keys, and says why the workload's were not loaded
    notes = notes_of(str(tmp_path / "site" / built["pages"]["this"]))
    assert "compared along: size (choose one as x)" in notes
    assert "comparison and machine keys: the configuration's (workload 'this' named by the results store: not " \
           "loaded, neither a built-in workload (fine_tuning, llm_load, perf_indicators) nor one the configuration " \
           "names; a name from data never imports or runs code)" in notes


WORKLOAD_FILE = '''
import os

with open(os.environ["MARKER"], "w") as handle:
    handle.write("ran")

KPIS = []
REGRESSION = {"comparison_keys": ["team_version"]}


def parse_once(ctx, settings):
    return {}


def kpi_labels(entry):
    return {}


def labels_model():
    return None
'''


def test_a_workload_file_a_document_names_never_runs_but_the_configurations_does(tmp_path, monkeypatch):
    path = tmp_path / "team_workload.py"
    path.write_text(WORKLOAD_FILE)
    marker = tmp_path / "marker"
    monkeypatch.setenv("MARKER", str(marker))
    store = one_store(tmp_path, kpi("u1", "run1", "rate", 1.0, "2026-11-01T10:00:00+00:00", workload=str(path)))
    built = dashboard.build(store, str(tmp_path / "site"))
    assert not marker.exists()
    page = str(tmp_path / "site" / built["pages"][str(path)])
    assert ("comparison and machine keys: none (workload %r named by the results store: not loaded, neither a "
            "built-in workload (fine_tuning, llm_load, perf_indicators) nor one the configuration names; a name from "
            "data never imports or runs code)" % str(path)) in notes_of(page)
    # the same file named by the configuration (postprocess.workload) is the user's own: it is loaded
    built = dashboard.build(store, str(tmp_path / "site2"), trusted_workloads=[str(path)])
    assert marker.read_text() == "ran"
    assert "compared along: team_version (choose one as x)" in notes_of(
        str(tmp_path / "site2" / built["pages"][str(path)]))


@pytest.mark.parametrize("text, reason", [
    ('{"kpi_name": "rate", "value": 1, "test_uuid": "x", "workload": ["perf_indicators"]}',
     "field workload is a list, expected text"),
    ('{"kpi_name": 5, "value": 1, "test_uuid": "x", "workload": "perf_indicators"}',
     "field kpi_name is a number, expected text"),
    ('{"kpi_name": "rate", "value": 1, "test_uuid": {"a": 1}, "workload": "perf_indicators"}',
     "field test_uuid is an object, expected text"),
    ('{"kpi_name": "rate", "value": "fast", "test_uuid": "x", "workload": "perf_indicators"}',
     "field value is text, expected a number"),
    ("this is not JSON", "not JSON"),
    ("[1, 2]", "not a JSON object (a list)"),
    ('"text"', "not a JSON object (text)"),
    ('{"workload": "perf_indicators", "a": ' + "[" * 100 + "]" * 100 + "}", "nested deeper than 64 levels"),
])
def test_one_bad_stored_document_is_skipped_and_counted_the_rest_is_shown(tmp_path, text, reason):
    store = one_store(tmp_path, kpi("u1", "run1", "rate", 1.0, "2026-11-01T10:00:00+00:00"))
    raw_document(store, text, "bad")
    built = dashboard.build(store, str(tmp_path / "site"))
    assert built["tests"] == 1 and built["skipped"] == 1
    assert built["notes"] == ["1 stored document(s) skipped: 1 %s" % reason]
    assert notes_of(built["index"]) == ["1 stored document(s) skipped: 1 %s" % reason]
    # a document that names its workload is counted on that workload's page too
    page_notes = notes_of(str(tmp_path / "site" / built["pages"]["perf_indicators"]))
    assert (("1 stored document(s) skipped: 1 %s" % reason) in page_notes) == ('"workload": "perf_indicators"' in text)


def test_a_kpi_document_without_its_test_or_kpi_is_counted_on_its_workloads_page(tmp_path):
    store = one_store(tmp_path, kpi("u1", "run1", "rate", 1.0, "2026-11-01T10:00:00+00:00"))
    raw_document(store, '{"kpi_name": "rate", "value": 1, "workload": "perf_indicators"}', "no-uuid")
    raw_document(store, '{"test_uuid": "u2", "value": 1, "workload": "perf_indicators"}', "no-kpi")
    built = dashboard.build(store, str(tmp_path / "site"))
    assert built["skipped"] == 2
    assert "2 document(s) of this workload skipped: 1 a KPI document without its kpi_name, 1 a KPI document " \
           "without its test_uuid" in notes_of(str(tmp_path / "site" / built["pages"]["perf_indicators"]))
    assert notes_of(built["index"]) == ["2 KPI document(s) skipped by their workload's page (each page says why)"]


def test_nan_and_infinite_stored_numbers_are_null_in_strict_json(tmp_path):
    store = one_store(tmp_path, kpi("u1", "run1", "rate", 1.0, "2026-11-01T10:00:00+00:00"))
    raw_document(store, '{"kpi_name": "rate", "value": NaN, "error": Infinity, "test_uuid": "u2", "size": -Infinity, '
                        '"workload": "perf_indicators", "@timestamp": "2026-11-02T10:00:00+00:00"}', "nan")
    built = dashboard.build(store, str(tmp_path / "site"))
    assert built["tests"] == 2 and built["skipped"] == 0
    assert built["notes"] == ["1 stored document(s) held NaN or infinite numbers, read as null"]

    def refuse(constant):
        raise AssertionError("%s in the page" % constant)

    text, _data = page_data(str(tmp_path / "site" / built["pages"]["perf_indicators"]))
    found = re.search(r"<script type='application/json' id='ex-data'>(.*?)</script>", text, re.S)
    rows = json.loads(found.group(1).replace("<\\/", "</"), parse_constant=refuse)["rows"]
    assert [(row["rate"], row.get("size")) for row in rows] == [(1.0, 256), (None, None)]


def test_only_http_and_relative_links_open_others_are_text(tmp_path):
    documents = [kpi("u%d" % i, "run%d" % i, "rate", 1.0, "2026-11-0%dT10:00:00+00:00" % (i + 1))
                 for i in range(4)]
    urls = ["https://ci.example/run0", "javascript:alert(document.domain)", "runs/run2/index.html",
            " JavaScript:alert(1)"]
    for document, url in zip(documents, urls):
        document["artifacts_url"] = url
    # a label named like a row column cannot smuggle a link in
    documents[0]["link"] = "javascript:alert(2)"
    store = one_store(tmp_path, *documents)
    built = dashboard.build(store, str(tmp_path / "site"))
    text, data = page_data(str(tmp_path / "site" / built["pages"]["perf_indicators"]))
    assert [(row.get("link"), row.get("artifacts")) for row in data["rows"]] == [
        ("https://ci.example/run0", None), (None, "javascript:alert(document.domain)"),
        ("runs/run2/index.html", None), (None, " JavaScript:alert(1)")]
    assert "window.open(link, '_blank', 'noopener')" in text and "alert(2)" not in text


def test_workload_names_that_clash_as_files_get_pages_of_their_own(tmp_path):
    names = ["index", "a/b", "a_b", "///"]
    store = one_store(tmp_path, *[kpi("u%d" % i, "run1", "rate", 1.0, "2026-11-01T10:00:00+00:00", workload=name)
                                  for i, name in enumerate(names)])
    built = dashboard.build(store, str(tmp_path / "site"))
    files = [built["pages"][name] for name in names]
    assert len(set(files)) == 4 and "index.html" not in files
    assert files[1] == "a_b.html" and re.fullmatch(r"workload-[0-9a-f]{16}\.html", files[2])
    for name, filename in zip(names, files):
        assert "- %s</title>" % html.escape(name) in open(str(tmp_path / "site" / filename), encoding="utf-8").read()


# --------------------------------------------------------------------------
# readable at first sight: the default series are the factors a user varies, a run's provenance is on the hover


def test_the_default_series_are_the_matrix_factors_never_a_runs_provenance(tmp_path):
    documents = []
    for run in range(6):
        for size in (256, 512):
            documents.append(kpi("t%d-%d" % (run, size), "run%d" % run, "rate", 100.0, "2026-11-%02dT10:00:00+00:00"
                                 % (run + 1), size=size, dtype="float32", library_version="2.%d" % (run // 3),
                                 git_commit="%040x" % run, hostname="ci-runner-%d" % run, presets="cpu_smoke,ci",
                                 collection_version="1.0.%d" % run, kpi_settings_version="1.1", build="b%d" % run,
                                 cpu_model="EPYC" if run % 2 else "Xeon"))
    store = one_store(tmp_path, *documents)
    built = dashboard.build(store, str(tmp_path / "site"), regression_section={"ignored_keys": ["build"]})
    text, data = page_data(str(tmp_path / "site" / built["pages"]["perf_indicators"]))
    # the workload's sorting keys (its matrix's settings) first, then its comparison keys, the machine last;
    # collection_version is a comparison key, but a version of this collection: provenance
    assert data["factors"] == ["indicator", "dtype", "size", "library_version", "host_cpu_model", "cpu_model"]
    assert data["dimensions"][:3] == ["when", "collection_version", "library_version"]
    # on the hover: the run, its time and every label that is not a factor (the configuration's ignored_keys too)
    assert data["hover"] == ["run_id", "when", "collection_version", "build", "git_commit", "hostname",
                             "kpi_settings_version", "presets"]
    # still filters: a reader picks a commit or a host
    assert "<select data-dim='git_commit'>" in text and "<select data-dim='hostname'>" in text
    assert "<option value='*' selected>(every factor that varies)</option>" in text
    # without the workload's keys (a workload the store names only), the built-in provenance names still apply
    store.write([dict(d, workload="team", doc_id="team-" + d["doc_id"]) for d in documents])
    built = dashboard.build(store, str(tmp_path / "site2"))
    _text, data = page_data(str(tmp_path / "site2" / built["pages"]["team"]))
    assert data["factors"] == ["build", "cpu_model", "dtype", "host_cpu_model", "indicator", "library_version",
                               "size"]


def test_series_factors_order_and_exclusions():
    labels = ["hostname", "cpu_model", "size", "server_version", "model", "git_commit", "build"]
    assert dashboard.series_factors(labels, comparison_keys=["server_version"], machine_keys=["cpu_model"],
                                    ignored_keys=["build"], sorting_keys=["model", "size"]) == [
        "model", "size", "server_version", "cpu_model"]
    assert dashboard.series_factors(labels) == ["cpu_model", "size", "server_version", "model", "build"]
