#!/usr/bin/env bash
# Every test of the project, in order of cost; `make test` runs this.
# Every step runs even when an earlier one failed; the exit status is non-zero
# when any step failed, and the summary names the failed steps.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
bin="$repo/.venv/bin"
export PATH="$bin:$PATH"
export ANSIBLE_CONFIG="$repo/ansible.cfg"
# the virtualenv is installed without byte-compiling (Makefile): Python keeps the .pyc of what
# the tests import, the first time they import it, unless this is set
unset PYTHONDONTWRITEBYTECODE
# a throw-away Ansible home: tools (molecule) install copies of the collection
# there, and a copy left in ~/.ansible/collections would shadow the checkout
ANSIBLE_HOME=$(mktemp -d "${TMPDIR:-/tmp}/perfscale-ansible-home.XXXXXX")
export ANSIBLE_HOME
# ...and the results store of the tests lives there too, not in ~/.local/share
export XDG_DATA_HOME="$ANSIBLE_HOME/data"
# (and the lanes still running when it stops, interrupted: below)
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$ANSIBLE_HOME"' EXIT

# the pytest steps run their test files on workers (pytest-xdist; one file per worker at a time,
# so a module's kubesim stays in one process); PYTEST_WORKERS=0 runs them in this process. Every
# step's tests wait on servers, subprocesses and simulated clusters part of the time: three
# workers keep two cores busy (the cluster step: 578 s with three, about 635 s with two; the unit
# step 107 -> 89 s and the kubesim step 108 -> 85 s, 2026-11-29; the kubesim step now runs in one
# process, in a lane beside the cluster step: below)
# The files go to the workers longest first, by the times of a recorded run (tests/file_times.json,
# tests/conftest.py), so that a long file does not start last and run alone at the end of its step; xdist's
# own reordering (by number of tests per file) is off
workers=(-n "${PYTEST_WORKERS:-3}" --dist loadfile --no-loadscope-reorder)

failed=()
step() {
  local name=$1
  shift
  echo "=== $name: $*"
  local start=$SECONDS
  if "$@"; then
    echo "=== $name: passed in $((SECONDS - start)) s"
  else
    echo "=== $name: FAILED in $((SECONDS - start)) s"
    failed+=("$name")
  fi
}

lint_steps() {
  step yamllint "$bin/yamllint" -s .
  step ansible-lint "$bin/ansible-lint" -q --profile production
  step molecule "$bin/molecule" test
  step sanity tests/sanity.sh
}

# A lane runs steps in the background, beside the steps in the foreground; its output goes to a
# file, printed (and its failed steps counted) when it is collected. The steps are CPU-bound but
# each of them waits part of the time (on servers, simulated clusters, its own slowest file at its
# end): a lane beside them uses that time. On two cores (2026-11-29, each step alone): unit 150
# CPU-s in 84 s, 17 CPU-s left idle; integration 611 in 311 s, 8 idle; kubesim 120 in 85 s, 47
# idle; the cluster step ~1,370 in ~750 s, ~120 idle; the lint steps ~290 CPU-s, one process at a time.
declare -A lane_pids=()
lane() {
  local name=$1
  shift
  echo "=== lane $name starts in the background: $*"
  lane_start=$SECONDS
  ( failed=(); "$@"; echo "=== lane $name: its steps ran in $((SECONDS - lane_start)) s"
    printf '%s\n' "${failed[@]}" > "$ANSIBLE_HOME/lane-$name-failed" ) > "$ANSIBLE_HOME/lane-$name.log" 2>&1 &
  lane_pids[$name]=$!
}
collect() {
  local name=$1
  wait "${lane_pids[$name]}"
  echo "=== lane $name (its output follows)"
  cat "$ANSIBLE_HOME/lane-$name.log"
  if [ -f "$ANSIBLE_HOME/lane-$name-failed" ]; then
    while read -r failed_step; do
      if [ -n "$failed_step" ]; then failed+=("$failed_step"); fi
    done < "$ANSIBLE_HOME/lane-$name-failed"
  else
    failed+=("lane $name")
  fi
}

# no import cycle and no upward import, in the collection and in kubesim (docs/architecture.md)
# each pytest step writes its tests' times (JUnit XML): the slowest of the run are printed at the end
junit() { echo "--junitxml=$ANSIBLE_HOME/junit-$1.xml"; }
step imports "$bin/python" tools/import_check.py
# the lint steps (one process at a time) beside the unit and integration steps, and on beside the
# cluster step when they last longer
lane lint lint_steps
step unit "$bin/python" -m pytest tests/unit -q -p no:cacheprovider "${workers[@]}" "$(junit unit)"
step integration "$bin/python" -m pytest tests/integration -q -p no:cacheprovider "${workers[@]}" "$(junit integration)"
# the kubesim step (tests of the simulator, each module with its own kubesim) beside the cluster
# step, in one process: the cluster step leaves about that much CPU idle (tests/kubesim and
# tests/cluster are never in one pytest run: their test files' basenames and conftest imports clash)
lane kubesim step kubesim "$bin/python" -m pytest tests/kubesim -q -p no:cacheprovider "$(junit kubesim)"
step cluster "$bin/python" -m pytest tests/cluster -q -p no:cacheprovider "${workers[@]}" "$(junit cluster)"
collect kubesim
collect lint

# this run's file times (kept in .cache/; `cp .cache/file_times.json tests/` records them for the next runs)
mkdir -p "$repo/.cache"
"$bin/python" tools/slowest_tests.py --top 25 --file-times "$repo/.cache/file_times.json" unit="$ANSIBLE_HOME/junit-unit.xml" \
  integration="$ANSIBLE_HOME/junit-integration.xml" kubesim="$ANSIBLE_HOME/junit-kubesim.xml" \
  cluster="$ANSIBLE_HOME/junit-cluster.xml"
echo "=== make test: $SECONDS s in all"

if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED steps: ${failed[*]}"
  exit 1
fi
echo "all test steps passed"
