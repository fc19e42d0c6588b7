"""Every change detector against real, human-annotated series: the Turing Change Point Dataset (TCPD).

The corpus (van den Burg & Williams 2020, arXiv:2003.06222; https://github.com/alan-turing-institute/TCPD) is
not committed: its data files belong to their owners. Pass its checkout with ``--corpus DIR`` (else the
environment's ``TCPD_DIR``, else ``benchmarks/.corpus/TCPD``, git-ignored); without it the run prints one
line saying how to get it and exits 0, the result marked "not run".

- Series: TCPD's univariate series with their annotations (five annotators each), except the five
  ``quality_control_*`` series: simulated series with a known change point (or none), put among the real
  ones to check the annotators (their READMEs in TCPD's ``datasets/``; the paper's data set is "37 time
  series" - the real ones). Provenance per series: name, n, annotators, annotations, SHA-256 of its JSON
  file; the TCPD commit when the directory is a git checkout, and the SHA-256 of annotations.json.
- The headline set: the series without missing values, scored for every method. The series with gaps
  (``uk_coal_employ``) are scored separately, for the methods that take gaps (ours, and reporting none).
- Methods side by side in one run: "zero" (no change reported); BinSeg and PELT as TCPDBench's "default"
  experiment runs them (R changepoint's ``cpt.mean``, MBIC penalty, Normal statistic, BinSeg with Q=5, on
  the series standardised by R's ``scale()``; here ruptures 1.1.10: model l2, min_size 1, jump 1, penalty
  3 log n, BinSeg capped at 5 change points, each location minus one as TCPDBench converts R's 1-based
  segment ends); Apache Otava 0.8.0 at its defaults (``regression_quality.py``'s virtualenv and
  ``otava_runner.py``); every method of ``methods.METHODS`` at its defaults.
- Metrics: F1 with a 5-point margin against every annotator, and covering (``changepoint_metrics.py``,
  TCPDBench's definitions). TCPDBench's published default scores of binseg, pelt and zero (PUBLISHED below,
  with their file and commit) are averaged over the same series; our zero must reproduce them exactly.
- Honesty about tuning: ``linear_segments``' defaults were chosen looking at this corpus. A leave-one-
  series-out estimate: for each series, the grid's best configuration on the others (mean F1 + mean
  cover; ties: the default, then grid order) scores the series left out.
- Goals: the default method's mean F1 and mean cover above zero's, BinSeg's and PELT's (ours and
  published) and Otava's.

Writes ``results/real_corpus.json`` and ``results/real_corpus.md``. The whole run takes about a minute
(Otava's virtualenv is created on first use), so ``make bench-quick`` runs it as it is. Exit status: 0
(goals met, or not run), 1 (a goal missed), 2 (a corpus that is not TCPD as expected: one line).
"""

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import time

import _common
import changepoint_metrics as metrics
from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils import safe_paths
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import methods

NAME = "real_corpus"
TCPD_URL = "https://github.com/alan-turing-institute/TCPD"
DEFAULT_CORPUS = os.path.join(_common.REPO, "benchmarks", ".corpus", "TCPD")
GET_IT = "git clone %s benchmarks/.corpus/TCPD" % TCPD_URL
QUALITY_CONTROL = "quality_control_"
# TCPD's largest file is 32 KB
MAX_FILE_BYTES = 4 * 1024 * 1024
SERIES_NAME = re.compile(r"[A-Za-z0-9_]{1,100}\Z")
COMMIT = re.compile(r"[0-9a-f]{40}\Z")
BINSEG_MAX_CHANGES = 5
GRID = {"penalty": (6.0, 8.0, 12.0), "max_pvalue": (0.005, 0.01, 0.02)}

# TCPDBench's published scores of its "default" experiment, per series: (binseg, pelt, zero) F1, then
# (binseg, pelt, zero) cover. None: the method did not run (binseg and pelt take no missing values).
PUBLISHED_SOURCE = {
    "repository": "https://github.com/alan-turing-institute/TCPDBench",
    "f1": {"file": "analysis/output/scores/default_f1_scores.json",
           "commit": "6662025f5847f6b214f05ad11e4950eba488c0df"},
    "cover": {"file": "analysis/output/scores/default_cover_scores.json",
              "commit": "97993b296018e33020779ad4f3d873b42174f2a9"},
}
PUBLISHED_METHODS = ("binseg", "pelt", "zero")
PUBLISHED = {
    "bank": (0.4, 0.4, 1.0, 0.5094664371772806, 0.5094664371772806, 1.0),
    "brent_spot": (0.48343373493975905, 0.4647239263803681, 0.3146067415730337,
                   0.6267941377908149, 0.6266446013415417, 0.2658176),
    "businv": (0.3703703703703703, 0.3703703703703703, 0.5882352941176471,
               0.5616385346323081, 0.6027521396099411, 0.46094765840220386),
    "centralia": (0.9090909090909091, 0.9090909090909091, 0.7628865979381444,
                  0.5635978835978837, 0.5635978835978837, 0.6746666666666667),
    "children_per_woman": (0.6175115207373272, 0.6175115207373272, 0.5074626865671642,
                           0.7982556272643626, 0.7982556272643626, 0.42910563901060694),
    "co2_canada": (0.6905689789555729, 0.6613545816733067, 0.36097560975609755,
                   0.6080954444081101, 0.6114412387983277, 0.2775684153596538),
    "construction": (0.7090909090909091, 0.7090909090909091, 0.6956521739130436,
                     0.4662169703155342, 0.4227346947723124, 0.5746032369964917),
    "debt_ireland": (0.7603305785123966, 0.7603305785123966, 0.4693877551020408,
                     0.6346153846153847, 0.6346153846153847, 0.32063492063492066),
    "gdp_argentina": (0.888888888888889, 0.888888888888889, 0.8235294117647058,
                      0.6674763588023808, 0.6674763588023808, 0.737087043952887),
    "gdp_croatia": (0.5833333333333333, 0.5833333333333333, 0.8235294117647058,
                    0.6053921568627451, 0.6053921568627451, 0.7083333333333333),
    "gdp_iran": (0.4915254237288136, 0.4915254237288136, 0.651685393258427,
                 0.4773172527036974, 0.4773172527036974, 0.582639714625446),
    "gdp_japan": (0.6153846153846154, 0.6153846153846154, 0.888888888888889,
                  0.6538916256157635, 0.6538916256157635, 0.802140309155767),
    "global_co2": (0.9285714285714286, 0.7536231884057971, 0.8461538461538461,
                   0.748224852071006, 0.6376856527413208, 0.7583210059171598),
    "homeruns": (0.8118811881188119, 0.8118811881188119, 0.659217877094972,
                 0.6826141913243321, 0.6826141913243321, 0.5107153116920425),
    "jfk_passengers": (0.7755102040816326, 0.7755102040816326, 0.723404255319149,
                       0.8392664497512488, 0.8392664497512488, 0.6298433048433048),
    "lga_passengers": (0.43820224719101125, 0.43820224719101125, 0.5347985347985348,
                       0.45828866764869847, 0.4744170110960888, 0.3830283439257799),
    "nile": (1.0, 1.0, 0.8235294117647058, 0.8800821917808218, 0.8800821917808218, 0.75808),
    "ozone": (0.6495726495726496, 1.0, 0.723404255319149, 0.6001481481481481, 0.6345922998096911, 0.5736625514403293),
    "rail_lines": (0.8461538461538461, 0.8461538461538461, 0.5365853658536586,
                   0.7863825363825364, 0.7863825363825364, 0.4281957633308984),
    "seatbelts": (0.6829268292682926, 0.6829268292682926, 0.6206896551724138,
                  0.796945892630244, 0.796945892630244, 0.5283637152777778),
    "shanghai_license": (0.8679245283018869, 0.8679245283018869, 0.6363636363636364,
                         0.9196947071511531, 0.9196947071511531, 0.5470886377156454),
    "unemployment_nl": (0.8764044943820225, 0.7730061349693252, 0.5663082437275986,
                        0.669177886902036, 0.6483671445199073, 0.5065595248493318),
    "us_population": (0.6666666666666666, 0.47058823529411764, 0.888888888888889,
                      0.3909313725490196, 0.5061274509803921, 0.8033761053440983),
    "usd_isk": (0.6565143824027072, 0.6565143824027072, 0.48866498740554154,
                0.7347653721190944, 0.7303371792260955, 0.43629300594994175),
    "well_log": (0.5342019543973942, 0.5545670225385527, 0.23702252693437809,
                 0.6954264948476262, 0.6785920888706041, 0.22457547325102878),
    "uk_coal_employ": (None, None, 0.5132743362831859, None, None, 0.35648072562358274),
}
# what the goals compare the default with: (key in "methods" or "published", label)
COMPARED = (("zero", "zero (no change)"), ("binseg", "BinSeg (ruptures, ours)"), ("pelt", "PELT (ruptures, ours)"),
            ("published:binseg", "BinSeg (TCPDBench published)"), ("published:pelt", "PELT (TCPDBench published)"),
            ("otava", "Apache Otava 0.8.0 defaults"))
# our scores of zero against TCPDBench's published ones: the metrics are exact, so no difference at all
REPRODUCTION_TOLERANCE = 1e-12


class CorpusError(ValueError):
    """The corpus directory does not hold TCPD as expected (one line naming the file and what was expected)."""


# --------------------------------------------------------------------------
# the corpus

def _read(directory, relative):
    """(document, SHA-256 of its bytes) of a JSON file of the corpus: inside it, regular, bounded."""
    path = os.path.join(directory, relative)
    data = bounded_input.read_file(path, directory, MAX_FILE_BYTES, name=relative)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError("%s: not UTF-8 text (byte %d); expected UTF-8 JSON" % (relative, exc.start)) from None
    return bounded_input.load_json(text, relative, max_bytes=MAX_FILE_BYTES), hashlib.sha256(data).hexdigest()


def _whole(value, what, minimum):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise CorpusError("%s is %s; expected a whole number of at least %d" % (what, json.dumps(value)[:60], minimum))
    return value


def _values(document, relative, n_obs):
    """The one series' values of a univariate dataset file: numbers, None for a missing value."""
    series = document.get("series")
    if not isinstance(series, list) or not series or not isinstance(series[0], dict):
        raise CorpusError("%s: 'series' is not a list of series objects; expected TCPD's dataset format" % relative)
    raw = series[0].get("raw")
    if not isinstance(raw, list) or len(raw) != n_obs:
        raise CorpusError("%s: series[0].raw is not a list of %d values; expected one value per observation"
                          % (relative, n_obs))
    for index, value in enumerate(raw):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise CorpusError("%s: series[0].raw[%d] is %s; expected a number or null"
                              % (relative, index, json.dumps(value)[:60]))
    return [None if value is None else float(value) for value in raw]


def checkout_commit(directory):
    """The commit a git checkout's HEAD names (read from .git, git is not run), or None."""
    git = os.path.join(directory, ".git")
    if not os.path.isdir(git):
        return None
    try:
        head = bounded_input.read_file(os.path.join(git, "HEAD"), git, 4096).decode("ascii").strip()
        if not head.startswith("ref: "):
            return head if COMMIT.match(head) else None
        ref = head[5:].strip()
        if not ref.startswith("refs/") or safe_paths.name_problem(ref):
            return None
        try:
            commit = bounded_input.read_file(os.path.join(git, ref), git, 4096).decode("ascii").strip()
        except bounded_input.FileRefused as exc:
            if not exc.missing:
                raise
            packed = bounded_input.read_file(os.path.join(git, "packed-refs"), git, MAX_FILE_BYTES).decode("ascii")
            commit = next((line.split()[0] for line in packed.splitlines() if line.split()[1:] == [ref]), "")
        return commit if COMMIT.match(commit) else None
    except (bounded_input.InputError, UnicodeDecodeError):
        return None


def load_corpus(directory):
    """TCPD's univariate series with their annotations and provenance, or a CorpusError of one line."""
    try:
        annotations, annotations_sha256 = _read(directory, "annotations.json")
        if not isinstance(annotations, dict) or not annotations:
            raise CorpusError("annotations.json: not an object of series; expected {series: {annotator: [indexes]}}")
        series, absent, multivariate, quality_control = [], [], [], []
        for name in sorted(annotations):
            if not SERIES_NAME.match(name):
                raise CorpusError("annotations.json: series name %s is not a plain name; expected letters, digits "
                                  "and _" % json.dumps(name)[:60])
            relative = "datasets/%s/%s.json" % (name, name)
            try:
                document, sha256 = _read(directory, relative)
            except bounded_input.FileRefused as exc:
                if not exc.missing:
                    raise
                absent.append(name)   # TCPD's `make` downloads the series it may not redistribute
                continue
            if not isinstance(document, dict) or document.get("name") != name:
                raise CorpusError("%s: its 'name' is not %s; expected the dataset of that name" % (relative, name))
            n_obs = _whole(document.get("n_obs"), "%s: n_obs" % relative, 1)
            if _whole(document.get("n_dim"), "%s: n_dim" % relative, 1) != 1:
                multivariate.append(name)
                continue
            values = _values(document, relative, n_obs)
            marks = annotations[name]
            if not isinstance(marks, dict) or not marks:
                raise CorpusError("annotations.json: %s is not an object of annotators; expected {annotator: "
                                  "[indexes]}" % name)
            try:
                marks = {uid: metrics.check_locations(points, "annotator %s" % uid, n_obs)
                         for uid, points in marks.items()}
            except ValueError as exc:
                raise CorpusError("annotations.json: %s, %s" % (name, exc)) from None
            if name.startswith(QUALITY_CONTROL):
                quality_control.append(name)
                continue
            series.append({"name": name, "n": n_obs, "values": values, "annotations": marks, "sha256": sha256,
                           "annotators": len(marks), "annotations_count": sum(len(p) for p in marks.values()),
                           "gaps": sum(value is None for value in values)})
    except bounded_input.InputError as exc:
        raise CorpusError(str(exc)) from None
    if not series:
        raise CorpusError("no univariate series with annotations; expected TCPD's datasets/<name>/<name>.json")
    return {"series": series, "absent": absent, "multivariate": multivariate, "quality_control": quality_control,
            "tcpd_commit": checkout_commit(directory), "annotations_sha256": annotations_sha256}


# --------------------------------------------------------------------------
# the methods

def zero(_values):
    return []


def _standardised(values):
    """R's scale(): centred, divided by the standard deviation with n - 1."""
    import numpy as np

    series = np.asarray(values, dtype=float)
    spread = series.std(ddof=1) if series.size > 1 else 0.0
    return (series - series.mean()) / (spread if spread > 0 else 1.0)


def binseg(values):
    """TCPDBench's default binseg: penalised binary segmentation, at most 5 change points."""
    import numpy as np
    import ruptures

    series = _standardised(values)
    algorithm = ruptures.Binseg(model="l2", min_size=1, jump=1).fit(series)
    ends = algorithm.predict(pen=3 * np.log(series.size))[:-1]
    if len(ends) > BINSEG_MAX_CHANGES:
        ends = algorithm.predict(n_bkps=BINSEG_MAX_CHANGES)[:-1]
    # R's changepoint gives each segment's last point (1-based); TCPDBench subtracts one
    return [int(end) - 1 for end in ends]


def pelt(values):
    """TCPDBench's default pelt: exact penalised segmentation."""
    import numpy as np
    import ruptures

    series = _standardised(values)
    return [int(end) - 1 for end in ruptures.Pelt(model="l2", min_size=1, jump=1).fit(series)
            .predict(pen=3 * np.log(series.size))[:-1]]


def ours(name, **options):
    def detect(values):
        return [change.index for change in methods.find_change_points(values, name, **options)]
    return detect


def otava(series):
    """Otava 0.8.0 at its defaults on every series: (change points per series, options)."""
    import regression_quality

    window_len, max_pvalue, min_magnitude = regression_quality.OTAVA_CONFIGURATIONS["otava_defaults"]
    with tempfile.TemporaryDirectory() as tmp:
        detected, _seconds, version = regression_quality.run_otava(series, window_len, max_pvalue, min_magnitude, tmp)
    return detected, {"window_len": window_len, "max_pvalue": max_pvalue, "min_magnitude": min_magnitude,
                      "version": version}


def score(series, found):
    return {"f1": metrics.f_measure(series["annotations"], found),
            "cover": metrics.covering(series["annotations"], found, series["n"]), "change_points": list(found)}


def _mean(values):
    values = list(values)
    return sum(values) / len(values) if values else None


def scored(series, found_per_series):
    per_series = {item["name"]: score(item, found) for item, found in zip(series, found_per_series)}
    return {"per_series": per_series, "mean_f1": _mean(s["f1"] for s in per_series.values()),
            "mean_cover": _mean(s["cover"] for s in per_series.values())}


def run_methods(series, with_baselines):
    """Every method's scores on ``series`` (the baselines - ruptures and Otava - only ``with_baselines``)."""
    results = {"zero": dict(scored(series, [zero(s["values"]) for s in series]), options={})}
    if with_baselines:
        for name, detect, options in (("binseg", binseg, {"model": "l2", "penalty": "3 log n", "max_changes": 5}),
                                      ("pelt", pelt, {"model": "l2", "penalty": "3 log n"})):
            results[name] = dict(scored(series, [detect(s["values"]) for s in series]), options=options)
        found, options = otava(series)
        results["otava"] = dict(scored(series, found), options=options)
    for name in methods.method_names():
        started = time.perf_counter()
        found = [ours(name)(s["values"]) for s in series]
        results[name] = dict(scored(series, found), options=methods.resolve_options(name, {}),
                             seconds=time.perf_counter() - started)
    return results


# --------------------------------------------------------------------------
# published scores, leave-one-out, goals

def published(series_names, results):
    """TCPDBench's published means over the headline series it has scores for, ours over the same ones,
    and how far our scores of the same methods are from the published ones, per series."""
    names = [name for name in series_names if name in PUBLISHED]
    out = {"source": PUBLISHED_SOURCE, "series": names, "means": {}, "ours_on_the_same_series": {},
           "series_where_ours_equals_published": {}}
    for index, method in enumerate(PUBLISHED_METHODS):
        f1 = [PUBLISHED[name][index] for name in names]
        cover = [PUBLISHED[name][index + 3] for name in names]
        out["means"][method] = {"mean_f1": _mean(f1), "mean_cover": _mean(cover)}
        if method in results:
            mine = results[method]["per_series"]
            out["series_where_ours_equals_published"][method] = sum(
                abs(mine[name]["f1"] - PUBLISHED[name][index]) <= REPRODUCTION_TOLERANCE
                and abs(mine[name]["cover"] - PUBLISHED[name][index + 3]) <= REPRODUCTION_TOLERANCE
                for name in names)
    for method, result in results.items():
        out["ours_on_the_same_series"][method] = {
            "mean_f1": _mean(result["per_series"][name]["f1"] for name in names),
            "mean_cover": _mean(result["per_series"][name]["cover"] for name in names)}
    return out


def zero_reproduction(*result_sets):
    """The largest difference between our zero scores and TCPDBench's published ones, over every series
    scored that has them (the check that the metrics are TCPDBench's: zero depends on nothing else)."""
    index = PUBLISHED_METHODS.index("zero")
    differences = [abs(scores[metric] - PUBLISHED[name][index + offset])
                   for results in result_sets for name, scores in results["zero"]["per_series"].items()
                   if name in PUBLISHED for metric, offset in (("f1", 0), ("cover", 3))]
    return {"series": len(differences) // 2, "max_difference": max(differences) if differences else None}


def choose(table, held, default_flags):
    """The configuration (index into ``table``, one row of per-series scores per configuration) with the
    best mean F1 + mean cover over every series but ``held``; ties: the default, then the first."""
    def criterion(index):
        others = [scores for j, scores in enumerate(table[index]) if j != held]
        if not others:
            return 0.0
        return round(_mean(s["f1"] for s in others) + _mean(s["cover"] for s in others), 12)
    return max(range(len(table)), key=lambda index: (criterion(index), default_flags[index], -index))


def leave_one_out(series, method=methods.DEFAULT_METHOD):
    """For each series, the grid configuration best on the others scores it (GRID, the module docstring)."""
    default = methods.resolve_options(method, {})
    configurations = [{"penalty": p, "max_pvalue": q} for p in GRID["penalty"] for q in GRID["max_pvalue"]]
    table = [[score(item, ours(method, **configuration)(item["values"])) for item in series]
             for configuration in configurations]
    default_flags = [all(default[key] == value for key, value in c.items()) for c in configurations]
    folds = []
    for held, item in enumerate(series):
        chosen = choose(table, held, default_flags)
        folds.append({"series": item["name"], "chosen": configurations[chosen],
                      "f1": table[chosen][held]["f1"], "cover": table[chosen][held]["cover"]})
    grid = [dict(configuration, mean_f1=_mean(s["f1"] for s in row), mean_cover=_mean(s["cover"] for s in row))
            for configuration, row in zip(configurations, table)]
    return {"method": method, "grid": grid, "criterion": "mean F1 + mean cover on the other series",
            "folds": folds, "mean_f1": _mean(fold["f1"] for fold in folds),
            "mean_cover": _mean(fold["cover"] for fold in folds)}


def _compared(out, key):
    headline = out["headline"]
    if key.startswith("published:"):
        method = key.split(":", 1)[1]
        mine = headline["published"]["ours_on_the_same_series"][out["default_method"]]
        return mine, headline["published"]["means"][method]
    return headline["methods"][out["default_method"]], headline["methods"][key]


def _shown(value):
    return "n/a" if value is None else "%.3f" % value


def goal_lines(out):
    """One line per goal: measured, goal, met or not (what make bench-quick prints)."""
    lines = []
    for key, label in COMPARED:
        mine, theirs = _compared(out, key)
        for metric, shown in (("mean_f1", "mean F1"), ("mean_cover", "mean cover")):
            name = "real corpus: %s %s above %s" % (out["default_method"], shown, label)
            # None: no series to compare on (a corpus without any series TCPDBench published scores of)
            met = None not in (mine[metric], theirs[metric]) and mine[metric] > theirs[metric]
            lines.append({"goal": name, "measured": mine[metric], "target": theirs[metric], "met": met,
                          "line": "%-70s %s (goal > %s): %s"
                                  % (name, _shown(mine[metric]), _shown(theirs[metric]), "met" if met else "NOT MET")})
    check = out["zero_reproduction"]["max_difference"]
    name = "real corpus: our metrics reproduce TCPDBench's zero scores (max |difference|)"
    met = check is not None and check <= REPRODUCTION_TOLERANCE
    lines.append({"goal": name, "measured": check, "target": REPRODUCTION_TOLERANCE, "met": met,
                  "line": "%-70s %s (goal <= %g): %s" % (name, "n/a" if check is None else "%g" % check,
                                                         REPRODUCTION_TOLERANCE, "met" if met else "NOT MET")})
    return lines


# --------------------------------------------------------------------------
# output

def _write(path, text):
    """Written whole or not at all: a temporary file beside it, then renamed."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=directory, prefix="." + NAME, delete=False)
    try:
        with handle:
            handle.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(handle.name, 0o666 & ~umask)
        os.replace(handle.name, path)
    except BaseException:
        os.unlink(handle.name)
        raise


def markdown(out):
    """The short table of results/real_corpus.md."""
    headline, gaps, loo = out["headline"], out["gaps"], out["leave_one_out"]
    default = out["default_method"]
    rows = ["# Real corpus (TCPD): recorded results", "",
            "`benchmarks/real_corpus.py`, %s; TCPD %s, %d series without gaps, F1 (5-point margin) and cover "
            "against every annotator, means." % (out["machine"]["date"], out["corpus"]["tcpd_commit"] or
                                                 "annotations.json sha256 " + out["corpus"]["annotations_sha256"][:12],
                                                 len(headline["series"])), "",
            "| method | mean F1 | mean cover |", "|---|---|---|"]
    order = sorted(headline["methods"], key=lambda m: -headline["methods"][m]["mean_f1"])
    for method in order:
        result = headline["methods"][method]
        label = "**%s** (default)" % method if method == default else method
        rows.append("| %s | %.3f | %.3f |" % (label, result["mean_f1"], result["mean_cover"]))
    published_means = headline["published"]
    for method in ("binseg", "pelt", "zero"):
        rows.append("| %s, TCPDBench published (%d series) | %s | %s |"
                    % (method, len(published_means["series"]), _shown(published_means["means"][method]["mean_f1"]),
                       _shown(published_means["means"][method]["mean_cover"])))
    rows.append("| %s, leave-one-series-out over the grid | %.3f | %.3f |"
                % (default, loo["mean_f1"], loo["mean_cover"]))
    rows += ["", "Series with gaps (%s): " % ", ".join(gaps["series"]) + "; ".join(
        "%s F1 %.3f cover %.3f" % (m, r["mean_f1"], r["mean_cover"]) for m, r in sorted(gaps["methods"].items())),
        "", "Per series (headline set), F1 / cover:", "",
        "| series | n | %s | zero | binseg | pelt | otava |" % default, "|---|---|---|---|---|---|---|"]
    for item in out["corpus"]["series"]:
        if item["name"] not in headline["series"]:
            continue
        cells = ["%.2f / %.2f" % (headline["methods"][m]["per_series"][item["name"]]["f1"],
                                  headline["methods"][m]["per_series"][item["name"]]["cover"])
                 for m in (default, "zero", "binseg", "pelt", "otava")]
        rows.append("| %s | %d | %s |" % (item["name"], item["n"], " | ".join(cells)))
    rows += ["", "Goals:", ""] + ["- `%s`" % goal["line"].strip() for goal in out["goal_results"]]
    return "\n".join(rows) + "\n"


def not_run(directory):
    """No corpus: one line, the result marked "not run" (a recorded run in its place is kept)."""
    path = os.path.join(_common.RESULTS, NAME + ".json")
    kept = False
    try:
        with open(path, encoding="utf-8") as handle:
            kept = json.load(handle).get("status") == "run"
    except (OSError, ValueError, AttributeError):
        kept = False
    line = ("real corpus: not run: no TCPD checkout at %s; get it with `%s` from the repository root, or pass "
            "--corpus DIR (or TCPD_DIR)%s" % (directory, GET_IT, "; the recorded results are kept" if kept else ""))
    if not kept:
        _write(path, json.dumps({"benchmark": NAME, "status": "not run", "reason": line, "get_it": GET_IT,
                                 "machine": _common.machine()}, indent=2) + "\n")
    print(line)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", default=os.environ.get("TCPD_DIR") or DEFAULT_CORPUS,
                        help="TCPD checkout (default: $TCPD_DIR, else benchmarks/.corpus/TCPD)")
    args = parser.parse_args(argv)
    directory = os.path.abspath(args.corpus)
    if not os.path.isdir(directory):
        return not_run(args.corpus)
    started = time.perf_counter()
    try:
        corpus = load_corpus(directory)
    except CorpusError as exc:
        print("real corpus: corpus %s: %s" % (args.corpus, exc), file=sys.stderr)
        return 2
    headline = [item for item in corpus["series"] if not item["gaps"]]
    with_gaps = [item for item in corpus["series"] if item["gaps"]]
    default = methods.DEFAULT_METHOD
    headline_results = run_methods(headline, with_baselines=True)
    gap_results = run_methods(with_gaps, with_baselines=False) if with_gaps else {}
    out = {
        "status": "run",
        "corpus": {"source": TCPD_URL, "directory": args.corpus, "tcpd_commit": corpus["tcpd_commit"],
                   "annotations_sha256": corpus["annotations_sha256"],
                   "series": [{key: item[key] for key in ("name", "n", "annotators", "annotations_count", "gaps",
                                                          "sha256")} for item in corpus["series"]],
                   "left_out": {"quality_control": corpus["quality_control"], "multivariate": corpus["multivariate"],
                                "not_in_the_checkout": corpus["absent"]}},
        "margin": metrics.MARGIN, "default_method": default,
        "headline": {"series": [item["name"] for item in headline], "methods": headline_results,
                     "published": published([item["name"] for item in headline], headline_results)},
        "gaps": {"series": [item["name"] for item in with_gaps], "methods": gap_results},
        "zero_reproduction": zero_reproduction(*(r for r in (headline_results, gap_results) if r)),
        "leave_one_out": leave_one_out(headline, default),
    }
    out["default_options"] = headline_results[default]["options"]
    out["goal_results"] = goal_lines(out)
    out["seconds"] = time.perf_counter() - started
    out = dict(out, benchmark=NAME, machine=_common.machine())
    _write(os.path.join(_common.RESULTS, NAME + ".md"), markdown(out))
    _write(os.path.join(_common.RESULTS, NAME + ".json"), json.dumps(out, indent=2) + "\n")
    for method in sorted(headline_results, key=lambda m: -headline_results[m]["mean_f1"]):
        print("%-16s mean F1 %.3f  mean cover %.3f"
              % (method, headline_results[method]["mean_f1"], headline_results[method]["mean_cover"]))
    print("%-16s mean F1 %.3f  mean cover %.3f (leave one series out)"
          % (default, out["leave_one_out"]["mean_f1"], out["leave_one_out"]["mean_cover"]))
    for goal in out["goal_results"]:
        print(goal["line"])
    return 0 if all(goal["met"] for goal in out["goal_results"]) else 1


if __name__ == "__main__":
    sys.exit(main())
