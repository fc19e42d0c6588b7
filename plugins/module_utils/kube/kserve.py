# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""KServe as the cluster serves it: which deployment mode an InferenceService gets, and which of the
URLs it publishes a load generator should target (standard library only).

Deployment mode (kserve/kserve @ aaac4e294dae2c7b1aa1886447793f3aa1c30912,
pkg/controller/v1beta1/inferenceservice/controller.go and pkg/apis/serving/v1beta1/configmap.go): the
``serving.kserve.io/deploymentMode`` annotation when it names a mode, else ``deploy.defaultDeploymentMode``
of the ``inferenceservice-config`` ConfigMap - ``Serverless`` upstream, ``RawDeployment`` in the
OpenShift AI fork (opendatahub-io/kserve), and rewritten by the OpenShift AI operator from the
DataScienceCluster: ``RawDeployment`` when KServe's ``serving`` is Removed
(opendatahub-operator stable-2.x, components/kserve/kserve_controller_actions.go). Knative mode where
Knative Services are not served is rejected by one ``ServerlessModeRejected`` event and nothing else:
this module says so before anything is deployed.

URLs (inference_service_status.go, the raw and Knative reconcilers): ``status.address.url`` is the
cluster-internal Service in both modes; ``status.url`` is the external name (Knative route, or the
Ingress/Gateway host in raw mode) - in the OpenShift AI fork it is the internal Service URL unless the
InferenceService is labelled ``networking.kserve.io/visibility: exposed`` (then the Route).
"""

from __future__ import annotations

import json

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError

CONFIGMAP = "inferenceservice-config"
MODE_ANNOTATION = "serving.kserve.io/deploymentMode"
KNATIVE = "Serverless"
RAW = "RawDeployment"
# the names KServe accepts, old and new (upstream renamed them Knative and Standard)
MODE_NAMES = {"Serverless": KNATIVE, "Knative": KNATIVE, "RawDeployment": RAW, "Standard": RAW}
UPSTREAM_DEFAULT = KNATIVE


class KServeError(PerfscaleError):
    """A deployment KServe on this cluster cannot serve (one line: the mode and what is missing)."""


def cluster_default_mode(configmaps):
    """``(mode, where)`` from the ``inferenceservice-config`` ConfigMaps found, or ``(None, None)``."""
    for configmap in configmaps or ():
        meta = configmap.get("metadata") or {}
        text = (configmap.get("data") or {}).get("deploy")
        if not text:
            continue
        try:
            mode = (json.loads(text) or {}).get("defaultDeploymentMode")
        except (ValueError, AttributeError):
            continue
        if mode in MODE_NAMES:
            return MODE_NAMES[mode], "%s/%s" % (meta.get("namespace"), meta.get("name"))
    return None, None


def resolve_deployment_mode(raw_deployment, configmaps, knative_served):
    """What an InferenceService deployed with ``raw_deployment`` (True, False or None for the cluster's
    default) gets: ``{mode, annotation, source}``; KServeError when it is Knative mode and the cluster
    serves no Knative Service (KServe would only say so in an event, and never mark it failed)."""
    if raw_deployment is None:
        mode, where = cluster_default_mode(configmaps)
        source = "the cluster's default (%s deploy.defaultDeploymentMode)" % where if mode else \
            "KServe's default (no %s ConfigMap found)" % CONFIGMAP
        mode = mode or UPSTREAM_DEFAULT
        annotation = None
    else:
        mode = RAW if raw_deployment else KNATIVE
        source = "raw_deployment: %s" % ("true" if raw_deployment else "false")
        annotation = mode
    if mode == KNATIVE and not knative_served:
        raise KServeError(
            "deployment mode Serverless (%s) needs Knative Serving, and this cluster serves no "
            "serving.knative.dev/v1 Service: set raw_deployment: true, or give KServe its serving "
            "(DataScienceCluster spec.components.kserve.serving.managementState: Managed, with the Serverless "
            "and Service Mesh operators)" % source)
    return {"mode": mode, "annotation": annotation, "source": source}


def inference_url(obj, in_cluster=False):
    """``{url, kind, note}``: the URL a load generator targets. From inside the cluster the internal
    ``status.address.url`` (then ``status.url``); from outside ``status.url`` (an LLMInferenceService:
    its ``url``, else its first address). ``note`` says when the URL chosen is cluster-internal only."""
    status = (obj or {}).get("status") or {}
    address = (status.get("address") or {}).get("url") or ""
    addresses = [a.get("url") for a in status.get("addresses") or () if isinstance(a, dict) and a.get("url")]
    url = status.get("url") or ""
    if in_cluster:
        chosen, kind = (address, "status.address.url") if address else (url, "status.url")
    else:
        chosen, kind = (url, "status.url") if url else ((addresses[0], "status.addresses[0].url") if addresses else
                                                        ("", "status.url"))
    note = ""
    host = chosen.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]
    if chosen and not in_cluster and (host.endswith(".svc") or host.endswith(".svc.cluster.local")):
        note = ("%s is cluster-internal (%s): reachable only from inside the cluster; expose the service "
                "(OpenShift AI: label networking.kserve.io/visibility=exposed) or run the load from the cluster"
                % (kind, chosen))
    return {"url": chosen, "kind": kind, "note": note}
