"""The slowest tests of a `make test` run, from the JUnit XML files of its steps.

    python tools/slowest_tests.py [--top N] STEP=FILE.xml [STEP=FILE.xml ...]

Prints one table: rank, seconds, step, test (the N slowest, 25 by default, across every step),
and each step's total test time. A missing or unreadable file is one line naming it; the others
are still read.
"""

import argparse
import sys
import xml.etree.ElementTree as ElementTree


def read_cases(path):
    """(name, seconds) of every test case of a JUnit XML file."""
    root = ElementTree.parse(path).getroot()
    cases = []
    for case in root.iter("testcase"):
        name = "%s::%s" % (case.get("classname", "").replace(".", "/") + ".py" if case.get("classname") else "?",
                           case.get("name", "?"))
        try:
            seconds = float(case.get("time") or 0.0)
        except ValueError:
            seconds = 0.0
        cases.append((name, seconds))
    return cases


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
    return 0


if __name__ == "__main__":
    sys.exit(main())
