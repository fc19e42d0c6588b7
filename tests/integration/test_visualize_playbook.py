import json
import os
import shutil
import sys

import pytest

from helpers import REPO, grep_tree, run_playbook

sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, os.path.join(REPO, "tests", "fixtures"))
import trees  # noqa: E402  pylint: disable=wrong-import-position
from browser import Chromium  # noqa: E402  pylint: disable=wrong-import-position

SCREENSHOTS = os.path.join(REPO, "tests", "output", "screenshots")


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo")
    run = run_playbook("playbooks/benchmark.yml", "-e", "preset=cpu_smoke", "-e", "artifact_dir=%s" % root)
    assert run.returncode == 0, run.output
    return root, run


def test_benchmark_ends_with_the_path_of_the_report_index(demo_run):
    root, run = demo_run
    index = root / "002__plots" / "reports_index.html"
    assert index.exists()
    # the summary's last line, just before the recap (the steps callback shows no skipped task)
    assert run.flat.rstrip().split("PLAY RECAP")[0].rstrip().endswith("Reports: %s" % index)


def test_reports_render_in_chromium_without_javascript_errors(demo_run):
    root, _run = demo_run
    plots = root / "002__plots"
    os.makedirs(SCREENSHOTS, exist_ok=True)
    with Chromium() as browser:
        browser.load("file://%s" % (plots / "reports_index.html"))
        assert browser.errors() == []
        links = browser.evaluate("Array.from(document.querySelectorAll('a')).map(a => a.getAttribute('href'))")
        assert links == ["error_report.html", "matrix_overview.html", "indicator_report.html", "regression_report.html"]
        browser.screenshot(os.path.join(SCREENSHOTS, "reports_index.png"))
        browser.load("file://%s" % (plots / "regression_report.html"))
        assert browser.errors() == []
        text = browser.evaluate("document.body.innerText")
        assert "8 KPI(s) without history (8 none stored)" in text and "host load while the tests ran" in text
        for report, minimum_plots in (("indicator_report.html", 2), ("matrix_overview.html", 4)):
            browser.load("file://%s" % (plots / report), settle=2.0)
            assert browser.errors() == [], report
            assert browser.evaluate("typeof Plotly") == "object"
            plots_drawn = browser.evaluate("document.querySelectorAll('.js-plotly-plot .main-svg').length")
            assert plots_drawn >= minimum_plots, report
            traces = browser.evaluate("document.querySelectorAll('.js-plotly-plot .scatterlayer .trace, "
                                      ".js-plotly-plot .barlayer .trace').length")
            assert traces >= 2, report
            legend = browser.evaluate("Array.from(document.querySelectorAll('.legendtext')).map(e => e.textContent)")
            assert any("dtype=float32" in text for text in legend), report
            png = browser.screenshot(os.path.join(SCREENSHOTS, report.replace(".html", ".png")))
            assert os.path.getsize(png) > 20_000


def test_the_explorer_filters_the_plot_and_its_permalink_restores_the_view(demo_run):
    root, _run = demo_run
    page = "file://%s" % (root / "002__plots" / "matrix_overview.html")
    points = "document.getElementById('ex-plot').getAttribute('data-points')"
    with Chromium() as browser:
        browser.load(page, settle=1.5)
        assert browser.errors() == []
        dims = browser.evaluate("Array.from(document.querySelectorAll('#explorer select[data-dim]'))"
                                ".map(e => e.getAttribute('data-dim'))")
        assert {"size", "dtype", "indicator"} <= set(dims)
        # the default x is size: the two convolutions have none, they are left out (and the count says so),
        # not drawn at an "(unset)" place of a category axis
        assert browser.evaluate(points) == "6"
        assert browser.evaluate("document.getElementById('ex-plot').getAttribute('data-left-out')") == "2"
        assert "6 of 8 test(s) shown; 2 without size left out (it does not apply to them)" in browser.evaluate(
            "document.getElementById('ex-count').textContent")
        assert browser.evaluate("document.getElementById('ex-plot')._fullLayout.xaxis.type") == "linear"
        assert browser.evaluate("document.getElementById('ex-plot').data.every(function (t) { return "
                                "t.x.every(function (x) { return typeof x === 'number'; }); })") is True
        # a rate is drawn from 0; zoomed in, the axis says it does not start at 0
        assert browser.evaluate("document.getElementById('ex-plot')._fullLayout.yaxis.range[0]") == 0
        browser.evaluate("(function(){var el=document.getElementById('ex-y'); el.value='fit';"
                         " el.dispatchEvent(new Event('change'));})()")
        assert browser.evaluate("document.getElementById('ex-plot')._fullLayout.yaxis.rangemode") == "normal"
        assert browser.evaluate("document.querySelector('#ex-plot .ytitle').textContent").endswith(
            " - zoomed, not from 0")
        browser.evaluate("(function(){var el=document.getElementById('ex-y'); el.value='zero';"
                         " el.dispatchEvent(new Event('change'));})()")
        # by default one series per combination of what varies: float32 and float64 never one line,
        # and no error bar below 0 GFLOP/s
        names = browser.evaluate("document.getElementById('ex-plot').data.map(function (t) { return t.name; })")
        assert any("dtype=float32" in n for n in names) and any("dtype=float64" in n for n in names), names
        assert not any("dtype=float32" in n and "dtype=float64" in n for n in names)
        assert browser.evaluate("document.getElementById('ex-plot').data.every(function (t) { return !t.error_y || "
                                "t.y.every(function (y, i) { return y - t.error_y.arrayminus[i] >= 0; }); })") is True
        assert "(" in browser.evaluate("document.querySelector('#ex-plot .xtitle').textContent")
        # a reader picks dtype=float64: the plot keeps the 3 float64 matmul points, in one trace per indicator
        browser.evaluate("(function(){var el=document.querySelector('#explorer select[data-dim=dtype]');"
                         "el.value='float64'; el.dispatchEvent(new Event('change'));})()")
        assert browser.evaluate(points) == "3"
        assert browser.evaluate("document.querySelectorAll('#ex-plot .scatterlayer .trace').length") >= 1
        link = browser.evaluate("window.location.hash")
        assert "f.dtype=float64" in link and link == browser.evaluate(
            "document.getElementById('ex-permalink').getAttribute('href')")
        kpi = browser.evaluate("document.getElementById('ex-kpi').value")
        # the permalink opened later restores the same view
        browser.load("about:blank", settle=0.1)
        browser.load(page + link, settle=1.5)
        assert browser.errors() == []
        assert browser.evaluate(points) == "3"
        assert browser.evaluate("document.querySelector('#explorer select[data-dim=dtype]').value") == "float64"
        assert browser.evaluate("document.getElementById('ex-kpi').value") == kpi
        browser.screenshot(os.path.join(SCREENSHOTS, "explorer.png"))


def test_visualize_a_damaged_tree_completes_with_warnings_and_an_error_report(tmp_path):
    root = tmp_path / "downloaded"
    trees.make_tree(str(root), points=5, failed=(4,))
    points = root / "001__matbenchmarking"
    os.remove(points / "000__matmul_float32_64" / "output.json")
    (points / "001__matmul_float64_128" / "settings.yaml").write_text("size: [unclosed\n")
    (points / "002__matmul_float32_256" / "point.json").write_text("{corrupt")
    os.remove(root / "000__host__capture_environment" / "environment.json")
    shutil.rmtree(points / "003__matmul_float64_512")
    run = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % root)
    assert run.returncode == 0, run.output
    assert "4 test(s) (1 failed, 0 from cache)" in run.flat
    plots = root / "002__plots"
    log = (plots / "parse.log").read_text()
    assert "output.json: missing" in log
    assert "point.json: unreadable, ignored" in log
    assert "HOST_CAPTURE_ENVIRONMENT/environment.json: missing" in log
    assert "settings.yaml: unreadable settings, ignored" in log
    report = (plots / "error_report.html").read_text()
    assert "001__matbenchmarking/004__matmul_float32_1024" in report
    assert "harness exited with 3: out of memory" in report
    assert "output.json: missing" in report and "HOST_CAPTURE_ENVIRONMENT/environment.json: missing" in report
    with Chromium() as browser:
        browser.load("file://%s" % (plots / "error_report.html"))
        assert browser.errors() == []
        assert browser.evaluate("document.querySelectorAll('.card h2.failed').length") == 1


def test_visualize_again_adds_a_plots_directory_and_reads_the_cache(tmp_path):
    root = tmp_path / "run"
    trees.make_tree(str(root), points=3)
    assert run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % root).returncode == 0
    run = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % root)
    assert run.returncode == 0, run.output
    assert "3 test(s) (0 failed, 3 from cache)" in run.flat
    assert sorted(d for d in os.listdir(root) if d.endswith("__plots")) == ["002__plots", "003__plots"]


def test_visualize_strict_mode_fails_with_what_is_missing(tmp_path):
    root = tmp_path / "run"
    trees.make_tree(str(root), points=2)
    os.remove(root / "000__host__capture_environment" / "environment.json")
    run = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % root,
                       "-e", json.dumps({"overrides": {"postprocess.strict": True}}))
    assert run.returncode != 0
    assert "strict mode: 2 test(s) lack KPI data: 001__matbenchmarking/000__matmul_float32_64: label collection_version" in run.flat


def test_visualize_without_results_dir_is_a_clear_error():
    run = run_playbook("playbooks/visualize.yml")
    assert run.returncode != 0
    assert "results_dir: missing; expected -e results_dir=PATH" in run.flat


def test_visualize_unknown_report_is_a_clear_error(tmp_path):
    trees.make_tree(str(tmp_path), points=1)
    run = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % tmp_path,
                       "-e", json.dumps({"overrides": {"postprocess.reports": ["error_report", "latency"]}}))
    assert run.returncode != 0
    assert ("unknown report(s) latency; reports of workload perf_indicators: error_report, indicator_report, "
            "matrix_overview") in run.flat
    assert not [d for d in os.listdir(tmp_path) if d.endswith("__plots")]


def test_every_copy_of_the_configuration_is_masked(tmp_path):
    """A sensitive-named key of the configuration never reaches an artifact in clear."""
    secret = "lab-token-7f3a9c21"
    with open(os.path.join(REPO, "config", "config.yaml"), encoding="utf-8") as handle:
        document = handle.read()
    config_file = tmp_path / "lab-config.yaml"
    config_file.write_text(document.replace("secrets:\n", "lab:\n  api_token: %s\n  name: lab-7\n\nsecrets:\n" % secret, 1))
    root = tmp_path / "run"
    trees.make_tree(str(root), points=1)
    shown = run_playbook("playbooks/config.yml", "-e", "config_file=%s" % config_file)
    assert shown.returncode == 0 and "api_token: '********'" in shown.output, shown.output
    assert secret not in shown.output
    recorded = run_playbook("playbooks/benchmark.yml", "-e", "config_file=%s" % config_file, "-e", "preset=rehearsal",
                            "-e", "artifact_dir=%s" % root)
    assert recorded.returncode == 0, recorded.output
    run = run_playbook("playbooks/visualize.yml", "-e", "config_file=%s" % config_file, "-e", "results_dir=%s" % root)
    assert run.returncode == 0, run.output
    plots = [d for d in os.listdir(root) if d.endswith("__plots")]
    assert plots and "lab-7" in (root / plots[0] / "config.yaml").read_text()
    assert grep_tree(str(root), secret) == []
    assert secret not in run.output


def test_an_empty_results_dir_is_an_error_not_an_empty_report(tmp_path):
    run = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % tmp_path)
    assert run.returncode != 0
    assert "results_dir %s: no test in it (a test is a directory holding settings.yaml and exit_code)" % tmp_path \
        in run.flat
    assert not [d for d in os.listdir(tmp_path) if d.endswith("__plots")]


def test_history_plots_show_the_evidence_in_chromium(tmp_path):
    """Runs with history: the regression report draws each KPI's history on a time axis
    (run id and commit on hover, the baseline band), the header says the host's load."""
    database = tmp_path / "history.sqlite"
    overrides = json.dumps({"overrides": {"export.sqlite.path": str(database)}})
    for day in range(1, 4):
        past = tmp_path / ("day-%d" % day)
        trees.make_tree(str(past), points=2, started="2026-11-%02dT10:00:00+00:00" % day)
        assert run_playbook("playbooks/export.yml", "-e", "results_dir=%s" % past, "-e", overrides).returncode == 0
    today = tmp_path / "today"
    trees.make_tree(str(today), points=2, rate_scale=0.7, started="2026-11-10T10:00:00+00:00")
    run = run_playbook("playbooks/visualize.yml", "-e", "results_dir=%s" % today, "-e", overrides)
    assert run.returncode == 0, run.output
    report = today / "002__plots" / "regression_report.html"
    with Chromium() as browser:
        browser.load("file://%s" % report, settle=2.0)
        assert browser.errors() == []
        text = browser.evaluate("document.body.innerText")
        assert "host load while the tests ran: up to 0.20 per CPU" in text
        assert "rate: regression" in text and "time_median: regression" in text and "a view of rate" in text
        axis = browser.evaluate("document.querySelector('.js-plotly-plot').layout.xaxis.type")
        assert axis == "date"
        hover = browser.evaluate("document.querySelector('.js-plotly-plot').data[0].hovertemplate")
        assert "run_id" in hover and "git_commit" in hover
        traces = browser.evaluate("Array.from(document.querySelectorAll('.js-plotly-plot')).map("
                                  "p => p.data.map(t => t.name).join(','))")
        assert any("baseline mean" in names for names in traces)
        browser.screenshot(os.path.join(SCREENSHOTS, "regression_report_history.png"))
