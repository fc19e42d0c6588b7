"""Summarize the task times a profiled test run recorded (tests/profiling/callback/task_times.py):
time per action, per role and the slowest tasks, and how much of each playbook's wall time
its tasks account for (the rest: start-up, parsing, includes)."""

import collections
import json
import sys


def main(path, top=25):
    tasks, totals = [], []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            (totals if record.get("total") else tasks).append(record)
    by_action = collections.Counter()
    count_action = collections.Counter()
    by_role = collections.Counter()
    by_task = collections.Counter()
    count_task = collections.Counter()
    attempts_action = collections.Counter()
    for record in tasks:
        if record["status"] == "skipped":
            count_action["(skipped)"] += 1
            by_action["(skipped)"] += record["seconds"]
            continue
        by_action[record["action"]] += record["seconds"]
        count_action[record["action"]] += 1
        attempts_action[record["action"]] += record.get("attempts", 1)
        by_role[record["role"] or "-"] += record["seconds"]
        key = "%s | %s" % (record["role"] or "-", record["task"])
        by_task[key] += record["seconds"]
        count_task[key] += 1
    playbook_time = sum(r["seconds"] for r in totals)
    task_time = sum(r["seconds"] for r in tasks)
    print("%d playbook runs, %.0f s in all; task results %d, %.0f s (the rest: start-up and between tasks)"
          % (len(totals), playbook_time, len(tasks), task_time))
    print("\nby action (seconds, count, mean, attempts: the calls an `until` loop made)")
    for action, seconds in by_action.most_common(top):
        count = count_action[action]
        print("  %8.1f %6d %6.2f %6d  %s" % (seconds, count, seconds / count, attempts_action[action] or count, action))
    print("\nby role")
    for role, seconds in by_role.most_common(top):
        print("  %8.1f  %s" % (seconds, role))
    print("\nslowest tasks (seconds, count)")
    for task, seconds in by_task.most_common(top):
        print("  %8.1f %5d  %s" % (seconds, count_task[task], task))


if __name__ == "__main__":
    main(sys.argv[1])
