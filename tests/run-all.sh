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
trap 'rm -rf "$ANSIBLE_HOME"' EXIT

# the pytest steps run their test files on workers (pytest-xdist; one file per worker at a time,
# so a module's kubesim stays in one process); PYTEST_WORKERS=0 runs them in this process. Every
# step's tests wait on servers, subprocesses and simulated clusters part of the time: three
# workers keep two cores busy (the cluster step: 578 s with three, about 635 s with two; the unit
# step 107 -> 89 s and the kubesim step 108 -> 85 s, 2026-11-29)
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
  failed=()  # this runs in a subshell: its failures are handed back through a file
  step yamllint "$bin/yamllint" -s .
  step ansible-lint "$bin/ansible-lint" -q --profile production
  step molecule "$bin/molecule" test
  step sanity tests/sanity.sh
  printf '%s\n' "${failed[@]}" > "$ANSIBLE_HOME/lint-failed"
}

# no import cycle and no upward import, in the collection and in kubesim (docs/architecture.md)
# each pytest step writes its tests' times (JUnit XML): the slowest of the run are printed at the end
junit() { echo "--junitxml=$ANSIBLE_HOME/junit-$1.xml"; }
step imports "$bin/python" tools/import_check.py
step unit "$bin/python" -m pytest tests/unit -q -p no:cacheprovider "${workers[@]}" "$(junit unit)"
step integration "$bin/python" -m pytest tests/integration -q -p no:cacheprovider "${workers[@]}" "$(junit integration)"
step kubesim "$bin/python" -m pytest tests/kubesim -q -p no:cacheprovider "${workers[@]}" "$(junit kubesim)"
# the lint steps are one process each at a time: they run beside the cluster step, whose workers
# wait on simulated clusters part of the time (their output follows the cluster step's)
echo "=== lint steps (yamllint, ansible-lint, molecule, sanity) start beside the cluster step"
lint_start=$SECONDS
lint_steps > "$ANSIBLE_HOME/lint.log" 2>&1 &
lint_pid=$!
step cluster "$bin/python" -m pytest tests/cluster -q -p no:cacheprovider "${workers[@]}" "$(junit cluster)"
wait "$lint_pid"
cat "$ANSIBLE_HOME/lint.log"
echo "=== lint steps: done $((SECONDS - lint_start)) s after they started"
if [ -f "$ANSIBLE_HOME/lint-failed" ]; then
  while read -r name; do
    if [ -n "$name" ]; then failed+=("$name"); fi
  done < "$ANSIBLE_HOME/lint-failed"
else
  failed+=("lint steps")
fi

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
