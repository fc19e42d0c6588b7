# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judges of monitoring: the Prometheus custom resource of the Prometheus operator.

Upstream: prometheus-operator/prometheus-operator @ 6adcebc5076c34f4f55f8f5f7b1e528929373ac7
(pkg/prometheus/server/operator.go, pkg/operator/statefulset_reporter.go, Documentation): ``Available`` is
False (StatefulSetNotFound, NoPodReady), ``Degraded`` (SomePodsNotReady) or True; ``Reconciled`` True
or False (ReconciliationFailed, retried). A Prometheus is up when both are True for its generation and
every replica is updated (the operator's own e2e check); openshift/cluster-monitoring-operator @
f581865b41267ff23bbf1cb30fbdd2e02cecd42f waits for the same on user-workload monitoring
(pkg/client/client.go, test/e2e/uwm_helpers.go).
"""

from __future__ import annotations

from ansible_collections.perfscale.topsail.plugins.module_utils.kube.waits.base import (
    Judge, condition, condition_text, describe, ready, status_of, to_int, waiting)


class PrometheusAvailable(Judge):
    """A Prometheus ``Available=True`` and ``Reconciled=True`` for its generation, every replica
    updated; Degraded (some pods not ready) and ReconciliationFailed are retried and waited through."""

    name = "prometheus"
    description = "a Prometheus Available"
    api_version = "monitoring.coreos.com/v1"
    kind = "Prometheus"
    upstream = ("https://github.com/prometheus-operator/prometheus-operator",
                "pkg/prometheus/server/operator.go, pkg/operator/statefulset_reporter.go")

    def observe(self, found, target):
        prometheus = self.subject(found, target)
        if prometheus is None:
            return self.absent(target)
        name = describe(prometheus)
        generation = (prometheus.get("metadata") or {}).get("generation")
        status = status_of(prometheus)
        for ctype in ("Available", "Reconciled"):
            item = condition(prometheus, ctype)
            if item is None or str(item.get("status")) != "True":
                return waiting("%s: %s" % (name, condition_text(item) if item else "no %s condition yet" % ctype))
            if generation is not None and item.get("observedGeneration") is not None and \
                    int(item["observedGeneration"]) < int(generation):
                return waiting("%s: %s of an older generation" % (name, ctype))
        spec = prometheus.get("spec") or {}
        wanted = to_int(spec.get("replicas"), 1) * to_int(spec.get("shards"), 1)
        if to_int(status.get("updatedReplicas")) < wanted:
            return waiting("%s: %s of %d replicas updated" % (name, status.get("updatedReplicas", 0), wanted))
        return ready("%s: Available, %d replicas" % (name, wanted))


JUDGES = (PrometheusAvailable,)
