#!/usr/bin/env bash
# ansible-test sanity on the built-and-installed collection.
#
# ansible-test must run from .../ansible_collections/perfscale/topsail/, so the
# collection is built (honouring build_ignore) and installed into a temporary
# tree. Its sanity virtualenvs bootstrap pip with a script downloaded from a
# host that is unreachable here: an equivalent script (ensurepip, then pip
# install of the requested version from the package index) is written first.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin="$repo/.venv/bin"
work=$(mktemp -d "${TMPDIR:-/tmp}/perfscale-sanity.XXXXXX")
trap 'rm -rf "$work"' EXIT

cache="$HOME/.ansible/test/cache"
mkdir -p "$cache"
# the pip version ansible-test bootstraps (24.2 for ansible-core 2.19)
pip_version=$(sed -n "s/^ *pip='\([0-9.]*\)',$/\1/p" "$("$bin/python" -c 'import ansible_test, os; print(os.path.dirname(ansible_test.__file__))')/_internal/python_requirements.py" | head -1)
pip_version=${pip_version:-24.2}
bootstrap="$cache/get_pip_${pip_version//./_}.py"
if [ ! -s "$bootstrap" ]; then
  cat > "$bootstrap" <<'PY'
"""Offline stand-in for get-pip.py: ensurepip, then pip install what was asked."""
import subprocess
import sys

args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade", "--default-pip"])
subprocess.check_call([sys.executable, "-m", "pip", "install"] + args)
PY
fi

"$bin/ansible-galaxy" collection build --output-path "$work" "$repo" >/dev/null
ANSIBLE_COLLECTIONS_PATH="$work/tree" "$bin/ansible-galaxy" collection install --offline --no-deps --force -p "$work/tree" "$work"/perfscale-topsail-*.tar.gz >/dev/null
# the collection's dependency (galaxy.yml), from the ansible package, beside it: the import and
# validate-modules tests load the kubernetes.core module_utils and doc fragments our modules use
site=$("$bin/python" -c 'import ansible_collections.kubernetes.core as k, os; print(os.path.dirname(os.path.dirname(k.__path__[0])))')
mkdir -p "$work/tree/ansible_collections/kubernetes"
cp -r "$site/kubernetes/core" "$work/tree/ansible_collections/kubernetes/core"
cd "$work/tree/ansible_collections/perfscale/topsail"
# ansible-test lists the files of a git repository; make the installed tree one
git init -q && git add -A && git -c user.email=ci@localhost -c user.name=ci commit -qm tree
PATH="$bin:$PATH" "$bin/ansible-test" sanity --local --python 3.11 "$@"
