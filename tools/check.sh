#!/usr/bin/env bash
# make check: the inner loop, a few minutes on two cores (docs/development.md "The inner loop").
#   imports       the package DAG and layers (tools/import_check.py)
#   unit          every unit test, the fuzz tests with 20 examples each instead of 150
#   integration   the few playbook runs that exercise the configuration path end to end
#   lint          yamllint on the YAML files changed since BASE (default: main, else HEAD~1), and
#                 ansible-lint on the roles and playbooks among them
# make test runs everything; this is what to run before each commit.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
bin="$repo/.venv/bin"
export PATH="$bin:$PATH"
export ANSIBLE_CONFIG="$repo/ansible.cfg"
unset PYTHONDONTWRITEBYTECODE
ANSIBLE_HOME=$(mktemp -d "${TMPDIR:-/tmp}/perfscale-check-home.XXXXXX")
export ANSIBLE_HOME XDG_DATA_HOME="$ANSIBLE_HOME/data"
trap 'rm -rf "$ANSIBLE_HOME"' EXIT

failed=()
total=$SECONDS
step() {
  local name=$1
  shift
  local start=$SECONDS
  if "$@"; then
    echo "=== $name: passed in $((SECONDS - start)) s"
  else
    echo "=== $name: FAILED in $((SECONDS - start)) s"
    failed+=("$name")
  fi
}

base=${BASE:-}
if [ -z "$base" ]; then
  if git rev-parse -q --verify main >/dev/null && [ "$(git rev-parse HEAD)" != "$(git rev-parse main)" ]; then
    base=$(git merge-base HEAD main)
  else
    base=HEAD~1
  fi
fi
# what changed since BASE, committed or not
changed=$( { git diff --name-only "$base" 2>/dev/null; git ls-files --others --exclude-standard; } | sort -u)

lint_changed() {
  local yaml=() ansible=()
  while read -r path; do
    [ -f "$path" ] || continue
    case "$path" in
      *.yml|*.yaml) yaml+=("$path") ;;
    esac
    case "$path" in
      roles/*/*) ansible+=("roles/$(echo "$path" | cut -d/ -f2)") ;;
      playbooks/*.yml) ansible+=("$path") ;;
    esac
  done <<< "$changed"
  if [ ${#yaml[@]} -gt 0 ]; then
    "$bin/yamllint" -s "${yaml[@]}" || return 1
  fi
  if [ ${#ansible[@]} -gt 0 ]; then
    mapfile -t ansible < <(printf '%s\n' "${ansible[@]}" | sort -u)
    "$bin/ansible-lint" -q --profile production "${ansible[@]}" || return 1
  fi
  echo "lint: ${#yaml[@]} YAML file(s), ${#ansible[@]} role(s)/playbook(s) changed since $(git rev-parse --short "$base")"
}

step imports "$bin/python" tools/import_check.py
step unit env PERFSCALE_FUZZ_PROFILE=perfscale-fuzz-quick \
  "$bin/python" -m pytest tests/unit -q -p no:cacheprovider -n "${PYTEST_WORKERS:-3}" --dist load
step integration "$bin/python" -m pytest -q -p no:cacheprovider \
  "tests/integration/test_config_playbook.py::test_config_playbook_prints_without_creating_a_run_directory" \
  "tests/integration/test_config_playbook.py::test_unknown_preset_lists_known_presets" \
  "tests/integration/test_benchmark_playbook.py::test_rehearsal_lists_points_and_runs_nothing"
step lint lint_changed

echo "=== check: $((SECONDS - total)) s in all"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED steps: ${failed[*]}"
  exit 1
fi
echo "all check steps passed"
