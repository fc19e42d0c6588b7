"""Fixtures of the kubesim tests: one server per test module, real clients."""

import json
import os
import ssl
import subprocess
import sys
import urllib.request

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kube_fixtures import kubectl_binary, kubesim_cluster  # noqa: E402


@pytest.fixture(scope="module")
def sim():
    with kubesim_cluster(profile="vanilla", pod_start_delay=0.2) as server:
        yield server


@pytest.fixture(scope="session")
def kubectl_path():
    return kubectl_binary()


@pytest.fixture(scope="module")
def kube_home(tmp_path_factory):
    """A HOME of its own: kubectl caches discovery in ~/.kube/cache."""
    return str(tmp_path_factory.mktemp("home"))


@pytest.fixture
def kubectl(sim, kubectl_path, kube_home):
    """``kubectl(*args, input=None, check=True, context=None)`` -> CompletedProcess (text)."""

    def run(*args, input=None, check=True, context=None, timeout=60):
        argv = [kubectl_path] + list(args)
        if context:
            argv += ["--context", context]
        env = dict(os.environ, KUBECONFIG=sim.kubeconfig, HOME=kube_home)
        result = subprocess.run(argv, input=input, capture_output=True, text=True, env=env, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError("kubectl %s failed (%d): %s%s" % (" ".join(args), result.returncode, result.stdout,
                                                                   result.stderr))
        return result
    return run


class Http:
    """Raw HTTPS calls to kubesim: ``(status, headers, body)``."""

    def __init__(self, sim):
        self.sim = sim
        self.context = ssl.create_default_context(cafile=sim.ca_file if hasattr(sim, "ca_file") else None)

    def __call__(self, method, path, body=None, token="admin", content_type="application/json", headers=None):
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
        request = urllib.request.Request(self.sim.url + path, data=data, method=method)
        if token == "admin":
            token = self.sim.admin_token
        if token:
            request.add_header("Authorization", "Bearer " + token)
        request.add_header("Content-Type", content_type)
        for key, value in (headers or {}).items():
            request.add_header(key, value)
        try:
            with urllib.request.urlopen(request, context=self.context, timeout=30) as response:
                raw = response.read()
                return response.status, response.headers, _decode(raw)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers, _decode(exc.read())


def _decode(raw):
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode()


@pytest.fixture
def http(sim):
    return Http(sim)


@pytest.fixture
def api_client(sim):
    """A kubernetes Python client ApiClient configured from the kubeconfig."""
    from kubernetes import client, config
    configuration = client.Configuration()
    config.load_kube_config(config_file=sim.kubeconfig, client_configuration=configuration)
    api = client.ApiClient(configuration)
    yield api
    api.close()

