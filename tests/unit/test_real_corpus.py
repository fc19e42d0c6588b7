"""benchmarks/real_corpus.py: reading a TCPD checkout (a directory of files from another repository), the
leave-one-out choice, the goals, and the run without the corpus. The real corpus is not needed: a small
TCPD-shaped directory is written per test."""

import hashlib
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))

import _common  # noqa: E402  pylint: disable=wrong-import-position
import real_corpus  # noqa: E402  pylint: disable=wrong-import-position


def dataset(name, values, n_dim=1):
    return {"name": name, "n_obs": len(values), "n_dim": n_dim,
            "series": [{"label": "V%d" % (d + 1), "type": "float", "raw": list(values)} for d in range(n_dim)]}


STEP = [10.0 + (i % 3) * 0.1 for i in range(40)] + [20.0 + (i % 3) * 0.1 for i in range(40)]


def write_corpus(root, annotations=None, datasets=None):
    """A TCPD-shaped directory: annotations.json and datasets/<name>/<name>.json."""
    annotations = annotations if annotations is not None else {
        "step": {"1": [40], "2": [39, 60], "3": []},
        "with_gaps": {"1": [3], "2": []},
        "quality_control_1": {"1": [5]},
        "multi": {"1": [2]},
        "not_downloaded": {"1": [1]},
    }
    datasets = datasets if datasets is not None else {
        "step": dataset("step", STEP),
        "with_gaps": dataset("with_gaps", [1.0, 2.0, None, 5.0, 5.0, 5.0]),
        "quality_control_1": dataset("quality_control_1", [0.0] * 10),
        "multi": dataset("multi", [1.0, 2.0, 3.0], n_dim=2),
    }
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "annotations.json"), "w", encoding="utf-8") as handle:
        handle.write(annotations if isinstance(annotations, str) else json.dumps(annotations))
    for name, document in datasets.items():
        os.makedirs(os.path.join(root, "datasets", name), exist_ok=True)
        with open(os.path.join(root, "datasets", name, name + ".json"), "w", encoding="utf-8") as handle:
            handle.write(document if isinstance(document, str) else json.dumps(document))
    return str(root)


def test_the_corpus_is_read_with_what_is_left_out_and_its_provenance(tmp_path):
    root = write_corpus(tmp_path / "TCPD")
    corpus = real_corpus.load_corpus(root)
    assert [item["name"] for item in corpus["series"]] == ["step", "with_gaps"]
    step = corpus["series"][0]
    with open(os.path.join(root, "datasets", "step", "step.json"), "rb") as handle:
        assert step["sha256"] == hashlib.sha256(handle.read()).hexdigest()
    assert (step["n"], step["annotators"], step["annotations_count"], step["gaps"]) == (80, 3, 3, 0)
    assert step["annotations"] == {"1": [40], "2": [39, 60], "3": []}
    assert corpus["series"][1]["values"] == [1.0, 2.0, None, 5.0, 5.0, 5.0]
    assert corpus["quality_control"] == ["quality_control_1"]
    assert corpus["multivariate"] == ["multi"]
    assert corpus["absent"] == ["not_downloaded"]
    assert corpus["tcpd_commit"] is None
    with open(os.path.join(root, "annotations.json"), "rb") as handle:
        assert corpus["annotations_sha256"] == hashlib.sha256(handle.read()).hexdigest()


def write_git(root, head, refs=None, packed=None):
    git = os.path.join(root, ".git")
    os.makedirs(os.path.join(git, "refs", "heads"), exist_ok=True)
    with open(os.path.join(git, "HEAD"), "w", encoding="ascii") as handle:
        handle.write(head + "\n")
    for ref, commit in (refs or {}).items():
        with open(os.path.join(git, ref), "w", encoding="ascii") as handle:
            handle.write(commit + "\n")
    if packed is not None:
        with open(os.path.join(git, "packed-refs"), "w", encoding="ascii") as handle:
            handle.write(packed)


COMMIT = "83b3039" + "0" * 33


@pytest.mark.parametrize("head,refs,packed,expected", [
    ("ref: refs/heads/master", {"refs/heads/master": COMMIT}, None, COMMIT),
    ("ref: refs/heads/master", {}, "# pack-refs with: peeled\n%s refs/heads/master\n" % COMMIT, COMMIT),
    (COMMIT, {}, None, COMMIT),
    ("ref: refs/heads/master", {}, None, None),
    ("ref: ../../etc/passwd", {}, None, None),
    ("ref: refs/../../x", {}, None, None),
    ("not a commit", {}, None, None),
    ("ref: refs/heads/master", {"refs/heads/master": "zz"}, None, None),
])
def test_the_tcpd_commit_is_read_from_the_checkout_without_running_git(tmp_path, head, refs, packed, expected):
    write_git(str(tmp_path), head, refs, packed)
    assert real_corpus.checkout_commit(str(tmp_path)) == expected


def test_a_ref_linked_out_of_the_checkout_is_not_read(tmp_path):
    outside = tmp_path / "outside"
    outside.write_text(COMMIT + "\n")
    write_git(str(tmp_path / "TCPD"), "ref: refs/heads/master")
    os.symlink(str(outside), str(tmp_path / "TCPD" / ".git" / "refs" / "heads" / "master"))
    assert real_corpus.checkout_commit(str(tmp_path / "TCPD")) is None


# bad corpora: (annotations, datasets, the line)
BAD = {
    "annotations_not_json": ("{", None, "annotations.json: not JSON: Expecting property name enclosed in double "
                                        "quotes: line 1 column 2 (char 1)"),
    "annotations_a_list": ([], None, "annotations.json: not an object of series; expected {series: {annotator: "
                                     "[indexes]}}"),
    "a_name_that_is_a_path": ({"../x": {"1": []}}, {}, "annotations.json: series name \"../x\" is not a plain name; "
                                                       "expected letters, digits and _"),
    "a_dataset_of_another_name": ({"a": {"1": []}}, {"a": dataset("b", [1.0, 2.0])},
                                  "datasets/a/a.json: its 'name' is not a; expected the dataset of that name"),
    "n_obs_not_a_number": ({"a": {"1": []}}, {"a": dict(dataset("a", [1.0]), n_obs="1")},
                           "datasets/a/a.json: n_obs is \"1\"; expected a whole number of at least 1"),
    "raw_too_short": ({"a": {"1": []}}, {"a": dict(dataset("a", [1.0, 2.0]), n_obs=3)},
                      "datasets/a/a.json: series[0].raw is not a list of 3 values; expected one value per observation"),
    "a_value_that_is_text": ({"a": {"1": []}}, {"a": dataset("a", [1.0, "2"])},
                             "datasets/a/a.json: series[0].raw[1] is \"2\"; expected a number or null"),
    "a_value_that_is_true": ({"a": {"1": []}}, {"a": dataset("a", [1.0, True])},
                             "datasets/a/a.json: series[0].raw[1] is true; expected a number or null"),
    "no_series": ({"a": {"1": []}}, {"a": dict(dataset("a", [1.0]), series={})},
                  "datasets/a/a.json: 'series' is not a list of series objects; expected TCPD's dataset format"),
    "a_nan": ({"a": {"1": []}}, {"a": '{"name": "a", "n_obs": 1, "n_dim": 1, "series": [{"raw": [NaN]}]}'},
              "datasets/a/a.json: key series.0.raw.0: nan is not a finite number; "
              "expected a finite number"),
    "an_annotation_past_the_end": ({"a": {"6": [2]}}, {"a": dataset("a", [1.0, 2.0])},
                                   "annotations.json: a, annotator 6: change point 2 is out of range; expected "
                                   "indexes from 0 to 1 (a series of 2 observations)"),
    "an_annotation_that_is_text": ({"a": {"6": ["1"]}}, {"a": dataset("a", [1.0, 2.0])},
                                   "annotations.json: a, annotator 6: change point '1' is not a whole number; "
                                   "expected 0-based indexes"),
    "no_annotators": ({"a": {}}, {"a": dataset("a", [1.0, 2.0])},
                      "annotations.json: a is not an object of annotators; expected {annotator: [indexes]}"),
    "only_multivariate": ({"a": {"1": []}}, {"a": dataset("a", [1.0], n_dim=2)},
                          "no univariate series with annotations; expected TCPD's datasets/<name>/<name>.json"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_corpus_that_is_not_tcpd_is_one_line(tmp_path, case):
    annotations, datasets, line = BAD[case]
    root = write_corpus(tmp_path / "TCPD", annotations, datasets or {})
    with pytest.raises(real_corpus.CorpusError) as caught:
        real_corpus.load_corpus(root)
    assert str(caught.value) == line


def test_a_series_file_linked_out_of_the_corpus_or_not_a_file_is_refused(tmp_path):
    root = write_corpus(tmp_path / "TCPD", {"a": {"1": []}}, {})
    os.makedirs(os.path.join(root, "datasets", "a"))
    (tmp_path / "elsewhere.json").write_text(json.dumps(dataset("a", [1.0, 2.0])))
    os.symlink(str(tmp_path / "elsewhere.json"), os.path.join(root, "datasets", "a", "a.json"))
    with pytest.raises(real_corpus.CorpusError) as caught:
        real_corpus.load_corpus(root)
    assert str(caught.value) == ("datasets/a/a.json: a link out of the results directory (to %s), not followed; "
                                 "expected a file inside %s" % (tmp_path / "elsewhere.json", root))
    os.unlink(os.path.join(root, "datasets", "a", "a.json"))
    os.mkfifo(os.path.join(root, "datasets", "a", "a.json"))
    with pytest.raises(real_corpus.CorpusError) as caught:
        real_corpus.load_corpus(root)
    assert str(caught.value) == "datasets/a/a.json: a FIFO, not a regular file; expected a regular file"


def test_a_file_that_is_not_utf8_or_too_big_is_refused(tmp_path, monkeypatch):
    root = write_corpus(tmp_path / "TCPD", {"a": {"1": []}}, {"a": dataset("a", [1.0, 2.0])})
    with open(os.path.join(root, "datasets", "a", "a.json"), "wb") as handle:
        handle.write(b'{"name": "\xff"}')
    with pytest.raises(real_corpus.CorpusError) as caught:
        real_corpus.load_corpus(root)
    assert str(caught.value) == "datasets/a/a.json: not UTF-8 text (byte 10); expected UTF-8 JSON"
    monkeypatch.setattr(real_corpus, "MAX_FILE_BYTES", 10)
    with pytest.raises(real_corpus.CorpusError) as caught:
        real_corpus.load_corpus(root)
    assert str(caught.value) == "annotations.json: 16 bytes, more than the limit of 10; expected at most 10"


# --------------------------------------------------------------------------
# the leave-one-out choice, the published means, the goals

def row(*pairs):
    return [{"f1": f1, "cover": cover} for f1, cover in pairs]


def test_the_left_out_series_does_not_choose_its_configuration():
    # over all three series configuration 1 is best, thanks to series 0; without series 0, configuration 0
    table = [row((0.5, 0.5), (0.9, 0.9), (0.9, 0.9)), row((1.0, 1.0), (0.8, 0.8), (0.8, 0.8))]
    assert real_corpus.choose(table, 0, [False, False]) == 0
    assert real_corpus.choose(table, 1, [False, False]) == 1
    # one series: nothing to choose on, the default
    assert real_corpus.choose([row((0.1, 0.1)), row((0.9, 0.9))], 0, [False, True]) == 1
    # a tie on the others: the default, else the first of the grid
    tied = [row((0.1, 0.1), (0.7, 0.7)), row((0.9, 0.9), (0.7, 0.7)), row((0.5, 0.5), (0.7, 0.7))]
    assert real_corpus.choose(tied, 0, [False, False, True]) == 2
    assert real_corpus.choose(tied, 0, [False, False, False]) == 0


def test_leave_one_out_scores_each_series_with_the_configuration_chosen_without_it(tmp_path):
    corpus = real_corpus.load_corpus(write_corpus(tmp_path / "TCPD"))
    result = real_corpus.leave_one_out(corpus["series"][:1] * 2)
    assert len(result["grid"]) == 9 and len(result["folds"]) == 2
    chosen = result["folds"][0]["chosen"]
    assert chosen in [{"penalty": g["penalty"], "max_pvalue": g["max_pvalue"]} for g in result["grid"]]
    # the step at 40 is found by every configuration: every annotator's point within 5
    assert result["mean_f1"] == pytest.approx(real_corpus.metrics.f_measure(
        corpus["series"][0]["annotations"], [40]))


def test_published_means_and_the_zero_reproduction():
    names = ["bank", "nile", "not_published"]
    results = {"zero": {"per_series": {name: {"f1": real_corpus.PUBLISHED.get(name, (0,) * 6)[2],
                                              "cover": real_corpus.PUBLISHED.get(name, (0,) * 6)[5]}
                                       for name in names}}}
    out = real_corpus.published(names, results)
    assert out["series"] == ["bank", "nile"]
    assert out["means"]["binseg"]["mean_f1"] == pytest.approx((0.4 + 1.0) / 2)
    assert out["means"]["zero"]["mean_cover"] == pytest.approx((1.0 + 0.75808) / 2)
    assert out["series_where_ours_equals_published"] == {"zero": 2}
    assert real_corpus.zero_reproduction(results) == {"series": 2, "max_difference": 0.0}
    results["zero"]["per_series"]["nile"]["f1"] += 0.001
    assert real_corpus.zero_reproduction(results)["max_difference"] == pytest.approx(0.001)


def goals_out(default=(0.8, 0.7), others=(0.6, 0.5), difference=0.0):
    scores = {"mean_f1": others[0], "mean_cover": others[1]}
    return {"default_method": "linear_segments",
            "headline": {"methods": {"linear_segments": {"mean_f1": default[0], "mean_cover": default[1]},
                                     "zero": scores, "binseg": scores, "pelt": scores, "otava": scores},
                         "published": {"ours_on_the_same_series": {"linear_segments": {
                             "mean_f1": default[0], "mean_cover": default[1]}},
                             "means": {"binseg": scores, "pelt": scores}}},
            "zero_reproduction": {"max_difference": difference}}


def test_goal_lines_compare_the_default_with_every_other_method():
    lines = real_corpus.goal_lines(goals_out())
    assert len(lines) == 13 and all(line["met"] for line in lines)
    assert lines[0]["line"] == ("real corpus: linear_segments mean F1 above zero (no change)            0.800 "
                                "(goal > 0.600): met")
    assert lines[-1]["line"].endswith("0 (goal <= 1e-12): met")
    missed = real_corpus.goal_lines(goals_out(default=(0.6, 0.7), difference=1e-6))
    assert [line["met"] for line in missed] == [False, True] * 6 + [False]
    assert missed[0]["line"].endswith("0.600 (goal > 0.600): NOT MET")


# --------------------------------------------------------------------------
# runs

def test_without_the_corpus_one_line_and_the_result_marked_not_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_common, "RESULTS", str(tmp_path / "results"))
    assert real_corpus.main(["--corpus", str(tmp_path / "absent")]) == 0
    line = capsys.readouterr().out
    assert line == ("real corpus: not run: no TCPD checkout at %s; get it with `git clone "
                    "https://github.com/alan-turing-institute/TCPD benchmarks/.corpus/TCPD` from the repository root, "
                    "or pass --corpus DIR (or TCPD_DIR)\n" % (tmp_path / "absent"))
    with open(str(tmp_path / "results" / "real_corpus.json"), encoding="utf-8") as handle:
        assert json.load(handle)["status"] == "not run"


def test_without_the_corpus_a_recorded_run_is_kept(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_common, "RESULTS", str(tmp_path))
    recorded = json.dumps({"status": "run", "goal_results": []})
    (tmp_path / "real_corpus.json").write_text(recorded)
    monkeypatch.setenv("TCPD_DIR", str(tmp_path / "absent"))
    assert real_corpus.main([]) == 0
    assert capsys.readouterr().out.rstrip("\n").endswith("(or TCPD_DIR); the recorded results are kept")
    assert (tmp_path / "real_corpus.json").read_text() == recorded


def test_a_bad_corpus_is_one_line_exit_2_and_nothing_written(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_common, "RESULTS", str(tmp_path / "results"))
    root = write_corpus(tmp_path / "TCPD", {"a": {"6": [9]}}, {"a": dataset("a", [1.0, 2.0])})
    assert real_corpus.main(["--corpus", root]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("real corpus: corpus %s: annotations.json: a, annotator 6: change point 9 is out of range; "
                            "expected indexes from 0 to 1 (a series of 2 observations)\n" % root)
    assert not os.path.exists(str(tmp_path / "results"))


def test_a_run_on_a_small_corpus_writes_its_results(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_common, "RESULTS", str(tmp_path / "results"))
    # Otava runs in its own virtualenv (made from PyPI on first use): here, a stand-in that finds nothing
    monkeypatch.setattr(real_corpus, "otava", lambda series: ([[] for _series in series], {"version": "stand-in"}))
    root = write_corpus(tmp_path / "TCPD")
    code = real_corpus.main(["--corpus", root])
    with open(str(tmp_path / "results" / "real_corpus.json"), encoding="utf-8") as handle:
        out = json.load(handle)
    assert code == (0 if all(goal["met"] for goal in out["goal_results"]) else 1)
    assert out["status"] == "run" and out["headline"]["series"] == ["step"]
    assert out["gaps"]["series"] == ["with_gaps"]
    assert set(out["headline"]["methods"]) == {"zero", "binseg", "pelt", "otava"} | set(
        real_corpus.methods.method_names())
    assert set(out["gaps"]["methods"]) == {"zero"} | set(real_corpus.methods.method_names())
    # the step between index 39 and 40: BinSeg and PELT report 39 (R's last point of a segment), ours 40
    assert out["headline"]["methods"]["binseg"]["per_series"]["step"]["change_points"] == [39]
    assert out["headline"]["methods"]["pelt"]["per_series"]["step"]["change_points"] == [39]
    assert out["headline"]["methods"]["linear_segments"]["per_series"]["step"]["change_points"] == [40]
    assert out["corpus"]["left_out"] == {"quality_control": ["quality_control_1"], "multivariate": ["multi"],
                                         "not_in_the_checkout": ["not_downloaded"]}
    assert out["headline"]["published"]["series"] == []
    assert out["zero_reproduction"]["max_difference"] is None
    printed = capsys.readouterr().out
    assert "real corpus: our metrics reproduce TCPDBench's zero scores (max |difference|) n/a" in printed
    with open(str(tmp_path / "results" / "real_corpus.md"), encoding="utf-8") as handle:
        assert "| step | 80 |" in handle.read()
