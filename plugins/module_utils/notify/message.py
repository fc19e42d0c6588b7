# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict of a run as one message: headline, counts, top changes, duration, links.

``verdict_message`` builds a plain mapping (what the spool keeps); ``markdown`` renders it for a
GitHub comment (with the hidden marker that finds the comment again) and ``slack_text`` for Slack's
``mrkdwn``.
"""

from __future__ import annotations

import re

MARKER = "<!-- perfscale.topsail verdict: %s -->"
MARKER_NAME = re.compile(r"[^A-Za-z0-9_.+/-]")
BUCKETS = (("regressions", "regression"), ("persisting_regressions", "persisting regression"),
           ("drifts", "drift"), ("improvements", "improvement"), ("inconclusive", "inconclusive"))


def marker(test_name):
    return MARKER % MARKER_NAME.sub("_", test_name or "default")


def _duration(seconds):
    if seconds is None:
        return "unknown"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return ("%dh %02dm %02ds" % (hours, minutes, secs) if hours else
            "%dm %02ds" % (minutes, secs) if minutes else "%ds" % secs)


def headline(counts, failed_points, analysed):
    if failed_points:
        return "FAILED POINTS"
    if counts["regressions"] or counts["persisting_regressions"]:
        return "REGRESSION"
    if not analysed:
        return "NOT ANALYSED"
    if counts.get("drifts"):
        return "DRIFT"
    if counts["inconclusive"]:
        return "INCONCLUSIVE"
    return "IMPROVEMENT" if counts["improvements"] else "NO REGRESSION"


def top_changes(summary, limit):
    """The changed KPIs (regressions first, then by the size of the change)."""
    order = {bucket: index for index, (bucket, _label) in enumerate(BUCKETS)}
    lines = [dict(line, bucket=bucket) for bucket, _label in BUCKETS for line in summary.get(bucket) or ()]
    lines.sort(key=lambda line: (order[line["bucket"]], -abs(line.get("relative_change") or 0.0)))
    return [_change_line(line) for line in lines[:limit]]


def _change_line(line):
    """A changed KPI as the message shows it; a drift by where its segment started and how far it moved."""
    drift = line.get("drift") if isinstance(line.get("drift"), dict) else None
    if drift:
        return {"kpi": line.get("kpi"), "test": line.get("test"), "verdict": "drift (%s)" % drift.get("direction"),
                "current": line.get("current"), "before": drift.get("level_start"), "unit": line.get("unit"),
                "relative_change": drift.get("relative_change"), "pvalue": drift.get("pvalue"), "why": line.get("why")}
    return {"kpi": line.get("kpi"), "test": line.get("test"), "verdict": line.get("verdict") or line["bucket"],
            "current": line.get("current"), "before": line.get("baseline_mean", line.get("history_mean")),
            "unit": line.get("unit"), "relative_change": line.get("relative_change"), "pvalue": line.get("pvalue"),
            "why": line.get("why")}


def verdict_message(test_name, run, summary, failed_points=(), links=None, limit=5):
    """``run``: ``run_id``, ``duration_s``, ``points``; ``summary``: the regression summary (or None when
    nothing was analysed); ``links``: ``{label: URL or path}``."""
    summary = summary or {}
    counts = {bucket: len(summary.get(bucket) or ()) for bucket, _label in BUCKETS}
    analysed = bool(summary.get("kpis_analysed"))
    return {"test_name": test_name or "default", "run_id": run.get("run_id"),
            "duration": _duration(run.get("duration_s")), "points": run.get("points"),
            "headline": headline(counts, list(failed_points), analysed), "counts": counts,
            "failed_points": list(failed_points), "summary_line": summary.get("message") or "not analysed",
            "changes": top_changes(summary, limit), "links": dict(links or {})}


def _number(value, unit=None):
    if value is None:
        return "-"
    text = "%.4g" % value if isinstance(value, float) else str(value)
    return "%s %s" % (text, unit) if unit else text


def _change(value):
    return "-" if value is None else "%+.1f%%" % (100.0 * value)


def _pvalue(value):
    return "-" if value is None else ("%.2g" % value)


def _run_line(message):
    points = message["points"] if message["points"] is not None else "?"
    return "Run `%s` · %s · %s point(s)" % (message["run_id"] or "-", message["duration"], points)


def _numbers(message):
    """regressions, persisting, drifts, improvements, inconclusive, failed points (a message spooled
    before drifts were counted has none)."""
    counts = message["counts"]
    return (counts["regressions"], counts["persisting_regressions"], counts.get("drifts", 0), counts["improvements"],
            counts["inconclusive"], len(message["failed_points"]))


def markdown(message):
    lines = [marker(message["test_name"]),
             "### perfscale.topsail · `%s`: **%s**" % (message["test_name"], message["headline"]),
             "", _run_line(message), "",
             "| regressions | persisting | drifts | improvements | inconclusive | failed points |",
             "|---:|---:|---:|---:|---:|---:|",
             "| %d | %d | %d | %d | %d | %d |" % _numbers(message),
             "", message["summary_line"]]
    if message["failed_points"]:
        lines += ["", "Failed points: " + ", ".join("`%s`" % p for p in message["failed_points"][:20])]
    if message["changes"]:
        lines += ["", "| KPI | test | verdict | before | now | change | p-value |", "|---|---|---|---:|---:|---:|---:|"]
        lines += ["| `%s` | %s | %s | %s | %s | %s | %s |" % (
            c["kpi"], c["test"], c["verdict"], _number(c["before"]), _number(c["current"], c["unit"]),
            _change(c["relative_change"]), _pvalue(c["pvalue"])) for c in message["changes"]]
    if message["links"]:
        lines += ["", " · ".join("[%s](%s)" % (label, url) if "://" in str(url) else "%s: `%s`" % (label, url)
                                 for label, url in message["links"].items())]
    return "\n".join(lines) + "\n"


def slack_text(message):
    lines = ["*perfscale.topsail* `%s`: *%s*" % (message["test_name"], message["headline"]), _run_line(message),
             "%d regression(s), %d persisting, %d drift(s), %d improvement(s), %d inconclusive, %d failed point(s)"
             % _numbers(message)]
    lines += ["• `%s` (%s): %s -> %s (%s, p=%s)" % (
        c["kpi"], c["verdict"], _number(c["before"]), _number(c["current"], c["unit"]), _change(c["relative_change"]),
        _pvalue(c["pvalue"])) for c in message["changes"]]
    lines += ["<%s|%s>" % (url, label) if "://" in str(url) else "%s: `%s`" % (label, url)
              for label, url in message["links"].items()]
    return "\n".join(lines)
