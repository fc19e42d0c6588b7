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
# a throw-away Ansible home: tools (molecule) install copies of the collection
# there, and a copy left in ~/.ansible/collections would shadow the checkout
ANSIBLE_HOME=$(mktemp -d "${TMPDIR:-/tmp}/perfscale-ansible-home.XXXXXX")
export ANSIBLE_HOME
# ...and the results store of the tests lives there too, not in ~/.local/share
export XDG_DATA_HOME="$ANSIBLE_HOME/data"
trap 'rm -rf "$ANSIBLE_HOME"' EXIT

# the slow steps run their test files on workers (pytest-xdist; one file per worker at a time,
# so a module's kubesim stays in one process); PYTEST_WORKERS=0 runs them in this process. The
# integration and cluster tests wait on servers and simulated clusters part of the time: three
# workers keep two cores busy there (the cluster step: 578 s with three, about 635 s with two)
workers=(-n "${PYTEST_WORKERS:-2}" --dist loadfile)
busy_workers=(-n "${PYTEST_WORKERS:-3}" --dist loadfile)

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

step unit "$bin/python" -m pytest tests/unit -q -p no:cacheprovider "${workers[@]}"
step integration "$bin/python" -m pytest tests/integration -q -p no:cacheprovider "${busy_workers[@]}"
step kubesim "$bin/python" -m pytest tests/kubesim -q -p no:cacheprovider "${workers[@]}"
step cluster "$bin/python" -m pytest tests/cluster -q -p no:cacheprovider --durations=10 "${busy_workers[@]}"
step yamllint "$bin/yamllint" -s .
step ansible-lint "$bin/ansible-lint" -q --profile production
step molecule "$bin/molecule" test
step sanity tests/sanity.sh

if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED steps: ${failed[*]}"
  exit 1
fi
echo "all test steps passed"
