"""The slowest tests of a `make test` run, from the JUnit XML files of its steps.

    python tools/slowest_tests.py [--top N] [--file-times tests/file_times.json] STEP=FILE.xml [...]

Prints one table: rank, seconds, step, test (the N slowest, 25 by default, across every step),
and each step's total test time. A missing or unreadable file is one line naming it; the others
are still read. ``--file-times`` also writes each test file's total seconds as JSON: the order in which
tests/conftest.py hands the files to the xdist workers, longest first.
"""

import argparse
import json
import os
import sys
import xml.etree.ElementTree as ElementTree


def read_cases(path):
    """(name, seconds) of every test case of a JUnit XML file."""
    root = ElementTree.parse(path).getroot()
    cases = []
    for case in root.iter("testcase"):
        parts = (case.get("classname") or "").split(".")
        while len(parts) > 1 and parts[-1][:1].isupper():    # a test class: tests.unit.test_x.TestY
            parts.pop()
        name = "%s::%s" % ("/".join(parts) + ".py" if parts != [""] else "?", case.get("name", "?"))
        try:
            seconds = float(case.get("time") or 0.0)
        except ValueError:
            seconds = 0.0
        cases.append((name, seconds))
    return cases


def file_times(steps):
    """``{test file: seconds}`` over every step's cases, longest first."""
    totals = {}
    for cases in steps.values():
        for name, seconds in cases:
            path = name.split("::", 1)[0]
            totals[path] = totals.get(path, 0.0) + seconds
    return {path: round(seconds, 1) for path, seconds in sorted(totals.items(), key=lambda item: -item[1])}


def write_file_times(path, steps):
    """Write file_times(steps) to ``path`` whole (a temporary file renamed over it)."""
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(file_times(steps), handle, indent=1)
        handle.write("\n")
    os.replace(temporary, path)


def table(steps, top):
    """The lines to print for ``steps`` ({step: [(name, seconds)]})."""
    rows = sorted(((seconds, step, name) for step, cases in steps.items() for name, seconds in cases), reverse=True)
    lines = ["the %d slowest tests of this run:" % min(top, len(rows)), "  rank  seconds  step         test"]
    lines += ["  %4d  %7.1f  %-11s  %s" % (rank, seconds, step, name)
              for rank, (seconds, step, name) in enumerate(rows[:top], 1)]
    lines.append("test time per step: " + ", ".join(
        "%s %.0f s (%d tests)" % (step, sum(s for _n, s in cases), len(cases)) for step, cases in steps.items()))
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--file-times", metavar="PATH", help="also write each test file's total seconds here (JSON)")
    parser.add_argument("files", nargs="+", metavar="STEP=FILE.xml")
    args = parser.parse_args(argv)
    steps = {}
    for item in args.files:
        step, _sep, path = item.partition("=")
        if not path:
            print("slowest tests: %r: expected STEP=FILE.xml" % item, file=sys.stderr)
            return 2
        try:
            steps[step] = read_cases(path)
        except (OSError, ElementTree.ParseError) as exc:
            print("slowest tests: %s: unreadable (%s); left out" % (path, exc), file=sys.stderr)
    for line in table(steps, args.top):
        print(line)
    if args.file_times:
        write_file_times(args.file_times, steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
