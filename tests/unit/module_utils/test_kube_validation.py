import copy
import glob
import os

import pytest
import yaml

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import validation as kv

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "demo", "labels": {"app.kubernetes.io/name": "demo"}},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "demo"}},
        "template": {
            "metadata": {"labels": {"app": "demo"}},
            "spec": {"containers": [{"name": "c", "image": "busybox", "imagePullPolicy": "IfNotPresent",
                                     "ports": [{"containerPort": 80}],
                                     "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}}]},
        },
    },
}

ISVC = {
    "apiVersion": "serving.kserve.io/v1beta1",
    "kind": "InferenceService",
    "metadata": {"name": "llm", "namespace": "models", "annotations": {"a": "b"}},
    "spec": {"predictor": {"model": {"modelFormat": {"name": "vLLM"}, "storageUri": "s3://bucket/model",
                                     "resources": {"limits": {"nvidia.com/gpu": 1}}}}},
}


def problems(obj, **kwargs):
    return [str(p) for p in kv.validate_manifest(obj, **kwargs)]


def test_valid_core_object_has_no_problem():
    assert problems(DEPLOYMENT) == []


def test_unknown_field_names_object_path_and_schema():
    bad = copy.deepcopy(DEPLOYMENT)
    container = bad["spec"]["template"]["spec"]["containers"][0]
    container["imagePullPolcy"] = container.pop("imagePullPolicy")
    assert problems(bad) == [
        "Deployment demo: spec.template.spec.containers[0].imagePullPolcy: unknown field"
        " (schema io.k8s.api.core.v1.Container)"]
    assert problems(bad, strict=False) == []


def test_check_manifest_raises_one_line_error():
    bad = copy.deepcopy(DEPLOYMENT)
    bad["spec"]["foo"] = 1
    with pytest.raises(errors.ManifestValidationError) as info:
        kv.check_manifest(bad)
    assert "\n" not in str(info.value)
    assert info.value.problems[0].path == "spec.foo"


def test_types_enums_required_and_int32():
    bad = copy.deepcopy(DEPLOYMENT)
    bad["spec"]["replicas"] = "three"
    bad["spec"]["revisionHistoryLimit"] = 2 ** 40
    pod = bad["spec"]["template"]["spec"]
    pod["restartPolicy"] = "Sometimes"
    pod["containers"].append({"image": "x"})
    found = problems(bad)
    assert "Deployment demo: spec.replicas: expected integer, got string (schema io.k8s.api.apps.v1.DeploymentSpec)" in found
    assert any("revisionHistoryLimit: invalid value 1099511627776: out of the int32 range" in p for p in found)
    assert any("restartPolicy: unsupported value \"Sometimes\"" in p for p in found)
    assert any("containers[1].name: required field is missing" in p for p in found)
    reasons = {p.reason for p in kv.validate_manifest(bad)}
    assert reasons == {kv.TYPE_INVALID, kv.INVALID, kv.NOT_SUPPORTED, kv.REQUIRED}


def test_maps_int_or_string_quantities_and_nulls():
    obj = copy.deepcopy(DEPLOYMENT)
    obj["metadata"]["labels"]["x"] = None
    obj["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}}
    obj["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"] = {"cpu": 0.5}
    assert problems(obj) == []
    obj["spec"]["strategy"]["rollingUpdate"]["maxSurge"] = [1]
    assert problems(obj) == ["Deployment demo: spec.strategy.rollingUpdate.maxSurge: expected string or integer, got array"
                             " (schema io.k8s.apimachinery.pkg.util.intstr.IntOrString)"]


def test_map_keys_are_written_in_brackets():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a.txt": 1}}
    assert problems(cm) == ["ConfigMap c: data[a.txt]: expected string, got integer (schema io.k8s.api.core.v1.ConfigMap)"]


def test_secret_data_must_be_base64():
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "not base64!"}}
    assert "illegal base64" in problems(secret)[0]
    secret["data"]["k"] = "aGVsbG8="
    assert problems(secret) == []


def test_free_form_core_fields_accept_anything():
    crd = yaml.safe_load(open(glob.glob("/work/shared/crds/kubeflow.org_pytorchjobs.yaml")[0])) \
        if os.path.exists("/work/shared/crds/kubeflow.org_pytorchjobs.yaml") else None
    if crd is None:
        pytest.skip("shared CRDs not present")
    assert problems(crd) == []


def test_unknown_kind_is_one_problem():
    found = kv.validate_manifest({"apiVersion": "example.com/v1", "kind": "Nope", "metadata": {"name": "n"}})
    assert [p.reason for p in found] == [kv.UNKNOWN_KIND]
    assert "apiVersion example.com/v1 kind Nope" in str(found[0])


def test_missing_kind_or_api_version():
    assert problems({"apiVersion": "v1", "metadata": {"name": "x"}}) == ["<no kind> x: kind: required field is missing"]


def test_shipped_crd_is_walked_strictly():
    assert problems(ISVC) == []
    bad = copy.deepcopy(ISVC)
    bad["spec"]["predictor"]["modle"] = {}
    bad["metadata"]["labelz"] = {}
    assert problems(bad) == [
        "InferenceService llm: metadata.labelz: unknown field (schema io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta)",
        "InferenceService llm: spec.predictor.modle: unknown field"
        " (schema inferenceservices.serving.kserve.io/v1beta1#.spec.predictor)",
    ]


def test_crd_enum_and_required():
    gateway = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "g"},
               "spec": {"gatewayClassName": "c",
                        "listeners": [{"name": "l", "port": 443, "protocol": "HTTPS", "tls": {"mode": "Bogus"}}]}}
    assert problems(gateway) == [
        'Gateway g: spec.listeners[0].tls.mode: unsupported value "Bogus": supported values: "Terminate", "Passthrough"'
        " (schema gateways.gateway.networking.k8s.io/v1#.spec.listeners[].tls.mode)"]
    del gateway["spec"]["gatewayClassName"]
    gateway["spec"]["listeners"][0]["tls"]["mode"] = "Terminate"
    assert [p.reason for p in kv.validate_manifest(gateway)] == [kv.REQUIRED]


def test_register_crd_at_run_time_and_preserve_unknown_fields():
    validator = kv.ManifestValidator(crd_dir=None)
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object",
                     "properties": {
                         "spec": {"type": "object", "required": ["size"], "properties": {
                             "size": {"type": "integer", "minimum": 1},
                             "port": {"x-kubernetes-int-or-string": True},
                             "tags": {"type": "array", "items": {"type": "string"}},
                             "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                             "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                             "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                                          "x-kubernetes-preserve-unknown-fields": True},
                             "note": {"type": "string", "nullable": True},
                         }}}}}}]}}
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
              "spec": {"size": 2, "port": "http", "tags": ["a"], "extra": {"anything": {"goes": 1}},
                       "labels": {"a": "b"}, "note": None,
                       "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}}}
    assert [p.reason for p in validator.validate(widget)] == [kv.UNKNOWN_KIND]
    validator.register_crd(crd)
    assert validator.validate(widget) == []
    widget["spec"].update(size=0, port=1.5, tags=[None], bogus=True)
    widget["spec"]["template"]["metadata"]["nam"] = "x"
    found = [str(p) for p in validator.validate(widget)]
    assert "Widget w: spec.size: invalid value 0: should be greater than or equal to 1 (schema widgets.example.com/v1#.spec.size)" in found
    assert any("spec.port: expected integer or string, got number" in p for p in found)
    assert any("spec.tags[0]: must not be null" in p for p in found)
    assert any("spec.bogus: unknown field" in p for p in found)
    assert any("spec.template.metadata.nam: unknown field" in p for p in found)
    assert len(found) == 5


def test_every_shipped_crd_is_indexed_and_loads():
    validator = kv.ManifestValidator()
    index = kv._crd_index(kv.DEFAULT_CRD_DIR)
    assert "serving.kserve.io/InferenceService" in index
    assert "tekton.dev/PipelineRun" in index
    for key, entry in index.items():
        group, kind = key.split("/")
        for version in entry["versions"]:
            assert validator.crd_schema(group, version, kind) is not None, key


def test_newest_core_version_is_the_default():
    version, definitions = kv.load_core_definitions()
    assert version == kv.available_versions()[-1]
    assert kv.core_gvk_index()[("apps", "v1", "Deployment")] == "io.k8s.api.apps.v1.Deployment"
    assert kv.OBJECT_META in definitions
