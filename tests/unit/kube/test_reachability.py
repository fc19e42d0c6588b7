import socket

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ClusterError
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import reachability


def kubeconfig(path, contexts, current=None):
    """A kubeconfig with one cluster per context: ``{context: server}``."""
    lines = ["apiVersion: v1", "kind: Config", "clusters:"]
    lines += ["- name: c-%s\n  cluster:\n    server: %s" % (name, server) for name, server in contexts.items()]
    lines += ["contexts:"] + ["- name: %s\n  context:\n    cluster: c-%s\n    user: u" % (name, name) for name in contexts]
    if current:
        lines.append("current-context: %s" % current)
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_the_server_comes_from_the_inventory_else_the_environment_merged_as_kubectl_does(tmp_path):
    first = kubeconfig(tmp_path / "first", {"a": "https://a.example:6443"}, current="b")
    second = kubeconfig(tmp_path / "second", {"b": "https://b.example:6443"}, current="a")
    # KUBECONFIG is a list: the first current-context wins, contexts from every file
    target = reachability.server_of({}, {"KUBECONFIG": "%s:%s" % (first, second)})
    assert target.url == "https://b.example:6443" and target.source.endswith("context b")
    assert reachability.server_of({"kubeconfig": first, "context": "a"}, {"KUBECONFIG": second}).url == \
        "https://a.example:6443"
    assert reachability.server_of({}, {"K8S_AUTH_HOST": "https://h:6443", "KUBECONFIG": first}).url == "https://h:6443"
    assert reachability.server_of({}, {"KUBECONFIG": first, "K8S_AUTH_CONTEXT": "a"}).url == "https://a.example:6443"


def test_a_missing_kubeconfig_or_context_is_one_line_naming_the_cluster(tmp_path):
    with pytest.raises(ClusterError, match=r"cluster driver: no kubeconfig to reach it \(KUBECONFIG=/nowhere: no such "
                                           r"file\)"):
        reachability.server_of({}, {"KUBECONFIG": "/nowhere"}, cluster="driver")
    config = kubeconfig(tmp_path / "k", {"a": "https://a:1"})
    with pytest.raises(ClusterError, match=r"cluster sutest: context 'x' is not in kubeconfig .* \(contexts: a\)"):
        reachability.server_of({"kubeconfig": config, "context": "x"}, {})


def test_a_refused_connection_is_the_reason_and_a_listening_server_answers():
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        port = listening.getsockname()[1]
        assert reachability.check(reachability.Target("https://127.0.0.1:%d" % port, "test")) is None
    target = reachability.Target("https://127.0.0.1:%d" % port, "KUBECONFIG=/k, context a")
    reason = reachability.check(target, timeout=2)
    assert reason == "connection refused on 127.0.0.1:%d" % port
    assert reachability.unreachable_message("sutest", target, reason) == (
        "cluster sutest (https://127.0.0.1:%d, from KUBECONFIG=/k, context a) is unreachable: connection refused on "
        "127.0.0.1:%d" % (port, port))


def test_in_a_pod_without_a_kubeconfig_the_service_accounts_cluster_is_the_target():
    target = reachability.server_of({}, {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443",
                                         "HOME": "/nonexistent"})
    assert (target.url, target.source) == ("https://10.0.0.1:443", "the in-cluster service account")


def test_the_executors_say_which_cluster_they_reach():
    from ansible_collections.perfscale.topsail.plugins.module_utils import executors

    assert executors.executor_class("kubernetes").cluster_role({}) == "driver"
    assert executors.executor_class("kubernetes").cluster_role({"kubernetes": {"cluster": "sutest"}}) == "sutest"
    assert executors.executor_class("local").cluster_role({}) is None


def test_require_reachable_gives_the_target_or_the_one_line(tmp_path):
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        port = listening.getsockname()[1]
        config = kubeconfig(tmp_path / "k", {"a": "https://127.0.0.1:%d" % port}, current="a")
        assert reachability.require_reachable("sutest", {"kubeconfig": config}).url == "https://127.0.0.1:%d" % port
    with pytest.raises(ClusterError, match=r"cluster sutest \(https://127.0.0.1:%d, from kubeconfig .*\) is "
                                           r"unreachable: connection refused" % port):
        reachability.require_reachable("sutest", {"kubeconfig": config}, timeout=2)
