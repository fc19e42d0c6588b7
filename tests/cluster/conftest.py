"""Fixtures of the toolbox-role tests: a kubesim per test module, the toolbox run as a user runs it.

    def test_something(sim, toolbox, tmp_path):
        run = toolbox("cluster capture_state", {"namespaces": ["default"]}, tmp_path)
        assert run.returncode == 0, run.output
        command_dir = run.command_dir          # NNN__cluster__capture_state

A module picks its cluster with ``SIM_SETTINGS = dict(profile="vanilla", addons=[...])``
(kubesim_cluster's settings; default: the openshift profile, time 20x faster).
"""

import glob
import json
import os
import sys

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

from kube_fixtures import kubesim_cluster  # noqa: E402
from helpers import run_playbook  # noqa: E402

DEFAULT_SIM = dict(profile="openshift", time_scale=20, pod_start_delay=0.1)


@pytest.fixture(scope="module")
def sim(request):
    settings = dict(DEFAULT_SIM, **getattr(request.module, "SIM_SETTINGS", {}))
    with kubesim_cluster(**settings) as server:
        yield server


def _command_dirs(root, command, suffix=""):
    name = "__".join(command.split()) + ("_" + suffix if suffix else "")
    return sorted(glob.glob(os.path.join(str(root), "[0-9][0-9][0-9]__" + name)))


@pytest.fixture
def toolbox(sim):
    """``toolbox(command, args, artifact_dir, *extra_args, from_config=False)`` -> CompletedProcess
    with ``output``, ``flat`` and ``command_dir`` (the command's last NNN__group__command directory)."""

    def run(command, args, artifact_dir, *extra, suffix="", env=None, timeout=600):
        argv = ["-e", json.dumps({"command": command, "args": args or {}}), "-e", "artifact_dir=%s" % artifact_dir]
        done = run_playbook("perfscale.topsail.toolbox", *(argv + list(extra)),
                            env=dict({"KUBECONFIG": sim.kubeconfig}, **(env or {})), timeout=timeout)
        found = _command_dirs(artifact_dir, command, suffix)
        done.command_dir = found[-1] if found else None
        return done

    return run


@pytest.fixture
def playbook(sim):
    """``playbook(name, *args)``: any playbook of the collection against this kubesim."""

    def run(name, *args, env=None, timeout=900):
        return run_playbook(name, *args, env=dict({"KUBECONFIG": sim.kubeconfig}, **(env or {})), timeout=timeout)

    return run


def read(path, name):
    with open(os.path.join(path, name), encoding="utf-8") as handle:
        text = handle.read()
    return json.loads(text) if name.endswith(".json") else text


def run_keeping_module_files(tmp_path, plays):
    """Run ``plays`` (written to tmp_path/plays.yml) with Ansible's remote files kept in tmp_path/remote and
    KUBECONFIG pointing nowhere (the plays give their cluster in their ``environment``); -> (what the plays
    wrote to tmp_path/results.json, the names of the AnsiballZ files - the module processes - they started)."""
    path = tmp_path / "plays.yml"
    path.write_text(yaml.safe_dump(plays, sort_keys=False))
    remote = tmp_path / "remote"
    run = run_playbook(str(path), env={"KUBECONFIG": "/nonexistent/kubeconfig", "ANSIBLE_KEEP_REMOTE_FILES": "1",
                                       "ANSIBLE_REMOTE_TMP": str(remote)}, timeout=600)
    assert run.returncode == 0, run.output[-4000:]
    started = sorted(os.path.basename(p) for p in glob.glob(str(remote / "**" / "AnsiballZ_*.py"), recursive=True))
    return read(tmp_path, "results.json"), started


@pytest.fixture(scope="module")
def kube(sim):
    """The kubernetes Python client's dynamic client on this kubesim: ``kube.get(kind, name, namespace, api_version)``."""
    from kubernetes import config as kube_config
    from kubernetes.dynamic import DynamicClient
    from kubernetes.dynamic.exceptions import NotFoundError

    client = DynamicClient(kube_config.new_client_from_config(config_file=sim.kubeconfig))

    class Kube:
        dynamic = client

        @staticmethod
        def get(kind, name=None, namespace=None, api_version="v1"):
            resource = client.resources.get(api_version=api_version, kind=kind)
            try:
                found = resource.get(name=name, namespace=namespace).to_dict()
            except NotFoundError:
                return None
            return found if name else found["items"]

    return Kube
