"""Add up the cProfile files tests/profiling/callback/worker_profile.py wrote: the main processes'
or the workers' time by function (cumulative), added up over the processes.

    .venv/bin/python tests/profiling/summarize_profiles.py /tmp/wprof [kind] [top]
"""

import glob
import os
import pstats
import sys


def main(directory, kind="worker", top=40):
    files = sorted(glob.glob(os.path.join(directory, "%s-*.prof" % kind)))
    if not files:
        sys.exit("%s: no %s-*.prof files" % (directory, kind))
    stats, unreadable = None, 0
    for path in files:
        try:
            if stats is None:
                stats = pstats.Stats(path)
            else:
                stats.add(path)
        except (EOFError, ValueError, TypeError):  # a process killed while it wrote
            unreadable += 1
    if stats is None:
        sys.exit("%s: none of the %d %s-*.prof files is readable" % (directory, len(files), kind))
    print("%d %s processes (%d unreadable), %.1f s in all" % (len(files), kind, unreadable, stats.total_tt))
    stats.files = []  # not a header line per process
    stats.sort_stats("cumulative").print_stats(int(top))


if __name__ == "__main__":
    main(*sys.argv[1:])
