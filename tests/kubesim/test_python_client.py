"""The kubernetes Python client (typed APIs and the dynamic client) against kubesim."""

import threading

import pytest
from kubernetes import client, dynamic, watch
from kubernetes.client.rest import ApiException


def _cm(name, labels=None, data=None):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels or {}), data=data or {"k": "v"})


def test_core_v1_create_get_update_conflict_delete(api_client):
    core = client.CoreV1Api(api_client)
    created = core.create_namespaced_config_map("default", _cm("py-cm"))
    assert created.metadata.uid and created.metadata.resource_version
    with pytest.raises(ApiException) as info:
        core.create_namespaced_config_map("default", _cm("py-cm"))
    assert info.value.status == 409 and '"reason":"AlreadyExists"' in info.value.body
    fresh = core.read_namespaced_config_map("py-cm", "default")
    fresh.data["k"] = "v2"
    updated = core.replace_namespaced_config_map("py-cm", "default", fresh)
    assert int(updated.metadata.resource_version) > int(fresh.metadata.resource_version)
    fresh.data["k"] = "stale"
    with pytest.raises(ApiException) as info:
        core.replace_namespaced_config_map("py-cm", "default", fresh)
    assert info.value.status == 409 and "the object has been modified" in info.value.body
    core.delete_namespaced_config_map("py-cm", "default")
    with pytest.raises(ApiException) as info:
        core.read_namespaced_config_map("py-cm", "default")
    assert info.value.status == 404 and '"kind":"configmaps"' in info.value.body


def test_generate_name_and_dry_run(api_client):
    core = client.CoreV1Api(api_client)
    made = core.create_namespaced_config_map("default", client.V1ConfigMap(
        metadata=client.V1ObjectMeta(generate_name="gen-")), dry_run="All")
    assert made.metadata.name.startswith("gen-") and len(made.metadata.name) == 9
    with pytest.raises(ApiException):
        core.read_namespaced_config_map(made.metadata.name, "default")


def test_apps_v1_generation_and_status_subresource(api_client):
    apps = client.AppsV1Api(api_client)
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "py-dep"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "p"}},
                     "template": {"metadata": {"labels": {"app": "p"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
            "status": {"replicas": 99}}
    dep = apps.create_namespaced_deployment("default", body)
    assert dep.metadata.generation == 1 and (dep.status is None or dep.status.replicas is None)
    dep = apps.patch_namespaced_deployment("py-dep", "default", {"metadata": {"labels": {"x": "y"}}})
    assert dep.metadata.generation == 1
    dep = apps.patch_namespaced_deployment("py-dep", "default", {"spec": {"replicas": 3}})
    assert dep.metadata.generation == 2
    status = apps.patch_namespaced_deployment_status("py-dep", "default", {"status": {"replicas": 3}, "spec": {"replicas": 9}})
    assert status.status.replicas == 3 and status.spec.replicas == 3 and status.metadata.generation == 2
    scale = apps.read_namespaced_deployment_scale("py-dep", "default")
    assert scale.spec.replicas == 3 and scale.status.selector == "app=p"
    apps.delete_namespaced_deployment("py-dep", "default")


def test_invalid_object_is_422_with_causes(api_client):
    deployments = dynamic.DynamicClient(api_client).resources.get(api_version="apps/v1", kind="Deployment")
    with pytest.raises(ApiException) as info:
        deployments.create(namespace="default", body={"apiVersion": "apps/v1", "kind": "Deployment",
                                                      "metadata": {"name": "bad"},
                                                      "spec": {"replicas": "two", "selector": {}, "template": {}}})
    assert info.value.status == 422
    import json
    body = json.loads(info.value.body)
    assert body["reason"] == "Invalid" and body["details"]["causes"][0]["field"] == "spec.replicas"
    assert body["message"].startswith('Deployment.apps "bad" is invalid: spec.replicas:')


def test_dynamic_client_patch_types(api_client):
    dyn = dynamic.DynamicClient(api_client)
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    cms.create(body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dyn"}, "data": {"a": "1"}},
               namespace="default")
    merged = cms.patch(name="dyn", namespace="default", body={"data": {"b": "2", "a": None}},
                       content_type="application/merge-patch+json")
    assert dict(merged.data) == {"b": "2"}
    jsonp = cms.patch(name="dyn", namespace="default", body=[{"op": "add", "path": "/data/c", "value": "3"}],
                      content_type="application/json-patch+json")
    assert dict(jsonp.data) == {"b": "2", "c": "3"}
    smp = cms.patch(name="dyn", namespace="default", body={"metadata": {"labels": {"l": "v"}}},
                    content_type="application/strategic-merge-patch+json")
    assert smp.metadata.labels.l == "v"
    applied = cms.server_side_apply(body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dyn"},
                                          "data": {"d": "4"}}, namespace="default", field_manager="py")
    assert applied.data.d == "4" and applied.data.c == "3"
    pods = dyn.resources.get(api_version="v1", kind="Pod")
    pods.create(namespace="default", body={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "smp-pod"},
                                           "spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}})
    patched = pods.patch(name="smp-pod", namespace="default", content_type="application/strategic-merge-patch+json",
                         body={"spec": {"containers": [{"name": "b", "image": "z"}]}})
    assert [(c.name, c.image) for c in patched.spec.containers] == [("a", "x"), ("b", "z")]
    deleted = pods.patch(name="smp-pod", namespace="default", content_type="application/strategic-merge-patch+json",
                         body={"spec": {"containers": [{"name": "a", "$patch": "delete"}]}})
    assert [c.name for c in deleted.spec.containers] == ["b"]
    pods.delete(name="smp-pod", namespace="default")
    cms.delete(name="dyn", namespace="default")


def test_list_selectors_and_pagination(api_client):
    core = client.CoreV1Api(api_client)
    for i in range(7):
        core.create_namespaced_config_map("team-a", _cm("page-%d" % i, {"tier": "a" if i < 3 else "b", "i": str(i)}))
    assert len(core.list_namespaced_config_map("team-a", label_selector="tier=a").items) == 3
    assert len(core.list_namespaced_config_map("team-a", label_selector="tier!=a,i").items) == 4
    assert len(core.list_namespaced_config_map("team-a", label_selector="i in (1,2,9)").items) == 2
    assert len(core.list_namespaced_config_map("team-a", label_selector="i notin (1,2),tier").items) == 5
    assert core.list_namespaced_config_map("team-a", label_selector="!i").items == []
    assert len(core.list_namespaced_config_map("team-a", label_selector="!nosuch").items) == 7
    assert [c.metadata.name for c in core.list_namespaced_config_map("team-a", field_selector="metadata.name=page-4").items] == ["page-4"]
    first = core.list_namespaced_config_map("team-a", label_selector="i", limit=3)
    assert len(first.items) == 3 and first.metadata._continue
    names = [c.metadata.name for c in first.items]
    token = first.metadata._continue
    while token:
        page = core.list_namespaced_config_map("team-a", label_selector="i", limit=3, _continue=token)
        names += [c.metadata.name for c in page.items]
        token = page.metadata._continue
    assert names == sorted("page-%d" % i for i in range(7))
    unfiltered = core.list_namespaced_config_map("team-a", limit=2)
    assert unfiltered.metadata.remaining_item_count == 5
    core.delete_collection_namespaced_config_map("team-a", label_selector="i")
    assert core.list_namespaced_config_map("team-a", label_selector="i").items == []


def test_watch_sees_added_modified_deleted(api_client):
    core = client.CoreV1Api(api_client)
    events = []
    start = core.list_namespaced_config_map("default")
    done = threading.Event()

    def consume():
        w = watch.Watch()
        for event in w.stream(core.list_namespaced_config_map, "default", resource_version=start.metadata.resource_version,
                              timeout_seconds=5, allow_watch_bookmarks=True):
            events.append((event["type"], event["object"].metadata.name))
            if event["type"] == "DELETED":
                w.stop()
        done.set()

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    core.create_namespaced_config_map("default", _cm("watched-py"))
    core.patch_namespaced_config_map("watched-py", "default", {"data": {"k": "changed"}})
    core.delete_namespaced_config_map("watched-py", "default")
    assert done.wait(10)
    assert [e for e in events if e[1] == "watched-py"] == [("ADDED", "watched-py"), ("MODIFIED", "watched-py"),
                                                          ("DELETED", "watched-py")]


def test_field_selector_on_pod_phase_and_node(api_client, sim):
    core = client.CoreV1Api(api_client)
    core.create_namespaced_pod("default", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "placed"},
                                           "spec": {"nodeName": "worker-0", "containers": [{"name": "c", "image": "i"}]}})
    assert [p.metadata.name for p in core.list_namespaced_pod("default", field_selector="spec.nodeName=worker-0").items] == ["placed"]
    import time
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if core.list_namespaced_pod("default", field_selector="status.phase=Running").items:
            break
        time.sleep(0.1)
    assert [p.metadata.name for p in core.list_namespaced_pod("default", field_selector="status.phase=Running").items] == ["placed"]
    core.delete_namespaced_pod("placed", "default")
