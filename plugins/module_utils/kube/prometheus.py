# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Prometheus around a test step: reset (or mark) before, query the step's window after, snapshot.

Reached by URL (``http(s)://host:port``, any Prometheus; the admin operations need it started with
``--web.enable-admin-api``). Standard library only (http.client).

- reset: delete every series (``/api/v1/admin/tsdb/delete_series`` with ``{__name__=~".+"}``) and
  clean the tombstones; mode ``mark`` deletes nothing (a shared Prometheus). Both record the time,
  which later queries take as the start of the test's window.
- query: each PromQL of a query file over ``[start, end]`` at ``step`` (``query_range``), one JSON
  file per query (the API's ``matrix``) and ``queries.json`` (the window, each query's series count).
- snapshot: ``/api/v1/admin/tsdb/snapshot``; when the Prometheus data directory is readable here,
  the snapshot is packed into the artifacts as ``<prefix>.tar.gz``.
"""

from __future__ import annotations

import datetime
import glob
import http.client
import json
import os
import re
import tarfile
import time
import urllib.parse

from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
from ansible_collections.perfscale.topsail.plugins.module_utils.kube import api_proxy
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts
from ansible_collections.perfscale.topsail.plugins.module_utils import bounded_input
from ansible_collections.perfscale.topsail.plugins.module_utils import safe_paths
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError

RESET_RECORD = "reset.json"
QUERIES_INDEX = "queries.json"
QUERY_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
RESET_MODES = ("reset", "mark")


class PrometheusError(PerfscaleError):
    """A Prometheus that cannot be reached or refuses, or a bad query file (one line)."""


class HttpTransport:
    """A Prometheus by URL: ``request(method, path, params)`` -> (status, body bytes). ``token``: a
    bearer token sent with every request (a query front-end behind an authenticating proxy, such as
    OpenShift's ``thanos-querier`` route), only over https:// or to a loopback host; it is never part of
    a message (``PrometheusClient`` masks every error)."""

    def __init__(self, url, timeout=30, token=None):
        parsed = urllib.parse.urlsplit(url or "")
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise PrometheusError("prometheus_url %r: expected http(s)://host[:port]" % (url,))
        if token:
            problem = secret_refs.header_problem(token, "prometheus_token_secret") or secret_refs.cleartext_problem(
                url, "prometheus_url", "credentials (the bearer token of prometheus_token_secret)")
            if problem:
                raise PrometheusError(problem)
        self.url = "%s://%s%s" % (parsed.scheme, parsed.netloc, parsed.path.rstrip("/"))
        self.scheme, self.host, self.base_path = parsed.scheme, parsed.netloc, parsed.path.rstrip("/")
        self.timeout = timeout
        self._token = token

    def request(self, method, path, params):
        query = urllib.parse.urlencode(params or {}, doseq=True)
        target = self.base_path + path
        body = None
        headers = {"Accept": "application/json"}
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        if method == "POST":
            body, headers["Content-Type"] = query, "application/x-www-form-urlencoded"
        elif query:
            target += "?" + query
        connection_class = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        connection = connection_class(self.host, timeout=self.timeout)
        try:
            connection.request(method, target, body=body, headers=headers)
            response = connection.getresponse()
            # at most one byte past the limit: the client refuses a longer answer by its size
            return response.status, response.read(bounded_input.MAX_RESPONSE_BYTES + 1)
        except (OSError, http.client.HTTPException) as exc:
            raise PrometheusError("%s %s%s: %s" % (method, self.url, path, exc)) from None
        finally:
            connection.close()


class KubeProxyTransport(api_proxy.ApiServerProxy):
    """A Prometheus pod reached through the API server's pod proxy
    (``/api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy/...``): no route, no port-forward; the
    caller's credentials (``pods/proxy``) are the kubeconfig's. ``api_client`` is a ``kubernetes``
    ``ApiClient``."""

    def __init__(self, api_client, namespace, pod, port, scheme="http", timeout=30):
        super().__init__(api_client, namespace, "pods", pod, port, scheme, timeout, error=PrometheusError)
        self.namespace, self.pod, self.port, self.scheme = namespace, pod, port, scheme
        self.url = "pod %s/%s:%s (through the API server)" % (namespace, pod, port)


class PrometheusClient:
    """The Prometheus HTTP API over a transport (by URL, or through the API server's pod proxy)."""

    def __init__(self, url=None, timeout=30, transport=None, token=None):
        self.transport = transport or HttpTransport(url, timeout, token)
        self.url = self.transport.url
        # the token never leaves in an error: the transport's nor one made of the server's answer
        self._mask = secret_refs.SecretMask([token] if token else [])

    def _call(self, method, path, params=None):
        with self._mask.guard(PrometheusError, keep=(PrometheusError,)):
            return self._call_unmasked(method, path, params)

    def _call_unmasked(self, method, path, params):
        status, raw = self.transport.request(method, path, params)
        if status == 204:
            return None
        try:
            document = bounded_input.load_json(raw, "%s %s%s: the answer" % (method, self.url, path),
                                               max_bytes=bounded_input.MAX_RESPONSE_BYTES)
        except bounded_input.NotJSON:
            document = None
        except bounded_input.InputError as exc:
            raise PrometheusError(str(exc)) from None
        if status >= 300 or not isinstance(document, dict) or document.get("status") != "success":
            reason = (document or {}).get("error") if isinstance(document, dict) else None
            if "/admin/" in path and (status == 404 or "admin APIs disabled" in str(reason)):
                reason = "the admin API is off (start Prometheus with --web.enable-admin-api)"
            elif status in (401, 403):
                reason = "%s (prometheus_token_secret: a bearer token the server accepts)" % (
                    "unauthorized" if status == 401 else "forbidden")
            raise PrometheusError("%s %s%s: %s %s" % (method, self.url, path, status,
                                                      reason or raw[:200].decode("utf-8", "replace").strip()))
        return document.get("data")

    def query_range(self, query, start, end, step):
        """The ``data`` of a range query: ``{"resultType": "matrix", "result": [{"metric": {...},
        "values": [[time, "value"], ...]}, ...]}``; any other shape is a ``PrometheusError``."""
        data = self._call("GET", "/api/v1/query_range", {"query": query, "start": "%.3f" % start,
                                                         "end": "%.3f" % end, "step": "%gs" % step})
        problem = _matrix_problem(data)
        if problem:
            raise PrometheusError("GET %s/api/v1/query_range: %s; expected a matrix of series" % (self.url, problem))
        return data

    def delete_all_series(self):
        self._call("POST", "/api/v1/admin/tsdb/delete_series", {"match[]": '{__name__=~".+"}'})
        self._call("POST", "/api/v1/admin/tsdb/clean_tombstones")

    def snapshot(self):
        """The new snapshot's directory name (one plain name: it is looked up under the data directory)."""
        data = self._call("POST", "/api/v1/admin/tsdb/snapshot")
        name = data.get("name") if isinstance(data, dict) else None
        if name is not None and (safe_paths.name_problem(name) or "/" in name):
            raise PrometheusError("POST %s/api/v1/admin/tsdb/snapshot: snapshot name %r: expected one plain "
                                  "directory name" % (self.url, name[:80] if isinstance(name, str) else name))
        return name


def _matrix_problem(data):
    """What is wrong with a range query's ``data``, or ``None``."""
    if not isinstance(data, dict):
        return "data is %s" % type(data).__name__
    result = data.get("result")
    if not isinstance(result, list):
        return "data.result is %s" % type(result).__name__
    for position, series in enumerate(result):
        if not isinstance(series, dict) or not isinstance(series.get("metric", {}), dict) \
                or not isinstance(series.get("values", []), list):
            return "data.result[%d] is not a series (metric, values)" % position
        for sample in series.get("values", []):
            if not isinstance(sample, list) or len(sample) != 2 or not isinstance(sample[0], (int, float)) \
                    or isinstance(sample[0], bool) or not isinstance(sample[1], str):
                return "data.result[%d] holds a sample %.60r (expected [time, \"value\"])" % (position, sample)
    return None


# --------------------------------------------------------------------------
# the query file


QUERY_KEYS = {"query": str, "unit": str, "help": str, "higher_is_better": bool}


def load_query_file(path):
    """{name: {query, unit, help, higher_is_better}} from a YAML file: a mapping of name to PromQL
    (or to a mapping with those keys), or a list of mappings with ``name`` and those keys. Names become
    file names (letters, digits, ``_.-``); ``unit`` and ``help`` describe the KPIs the ``prom``
    workload derives (docs/post-processing.md)."""
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except OSError as exc:
        raise PrometheusError("promquery_file %s: %s" % (path, exc.strerror or exc)) from None
    except yaml.YAMLError as exc:
        raise PrometheusError("promquery_file %s: not YAML (%s)" % (path, " ".join(str(exc).split())[:160])) from None
    if isinstance(data, list) and data and all(isinstance(item, dict) and "name" in item for item in data):
        data = {item["name"]: {k: v for k, v in item.items() if k != "name"} for item in data}
    if not isinstance(data, dict) or not data:
        raise PrometheusError("promquery_file %s: expected a mapping of name: PromQL (or a list of {name, query})" % path)
    queries = {}
    for name, spec in data.items():
        if not isinstance(name, str) or not QUERY_NAME.match(name):
            raise PrometheusError("promquery_file %s: query name %r: expected letters, digits, '_', '.' or '-'"
                                  % (path, name))
        queries[name] = _query_spec(path, name, spec)
    return queries


def _query_spec(path, name, spec):
    spec = {"query": spec} if isinstance(spec, str) else spec
    if not isinstance(spec, dict):
        raise PrometheusError("promquery_file %s: query %s: expected a PromQL expression or a mapping with query"
                              % (path, name))
    unknown = sorted(set(map(str, spec)) - set(QUERY_KEYS))
    if unknown:
        raise PrometheusError("promquery_file %s: query %s: unknown key(s) %s; expected %s"
                              % (path, name, ", ".join(unknown), ", ".join(QUERY_KEYS)))
    query = spec.get("query")
    if not isinstance(query, str) or not query.strip():
        raise PrometheusError("promquery_file %s: query %s: expected a PromQL expression" % (path, name))
    for key, kind in QUERY_KEYS.items():
        if spec.get(key) is not None and not isinstance(spec[key], kind):
            raise PrometheusError("promquery_file %s: query %s: %s %r: expected a %s"
                                  % (path, name, key, spec[key], "boolean" if kind is bool else "string"))
    return {"query": query, "unit": spec.get("unit") or "", "help": spec.get("help") or "",
            "higher_is_better": bool(spec.get("higher_is_better", False))}


# --------------------------------------------------------------------------
# the window


def _timestamp(value, name):
    if value in (None, ""):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        parsed = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise PrometheusError("%s %r: expected a Unix time or an ISO 8601 date" % (name, value)) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return parsed.timestamp()


def last_reset(run_root):
    """Time of the run's last reset/mark (``NNN__cluster__reset_prometheus_db/reset.json``), or None."""
    found = []
    for path in glob.glob(os.path.join(glob.escape(run_root), "**", RESET_RECORD), recursive=True):
        if "__reset_prometheus_db" not in os.path.basename(os.path.dirname(path)):
            continue
        try:
            with open(path, encoding="utf-8") as handle:
                found.append(float(json.load(handle)["ts"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return max(found) if found else None


def window(start_ts=None, end_ts=None, duration_s=0, run_root=None, now=None):
    """(start, end) in Unix seconds: ``end_ts`` or now; ``start_ts``, or ``end - duration_s``, or the
    run's last reset."""
    end = _timestamp(end_ts, "end_ts")
    end = end if end is not None else (now if now is not None else time.time())
    start = _timestamp(start_ts, "start_ts")
    if start is None and duration_s:
        start = end - float(duration_s)
    if start is None and run_root:
        start = last_reset(run_root)
    if start is None:
        raise PrometheusError("query window: no start; expected start_ts, duration_s > 0, or a cluster "
                              "reset_prometheus_db earlier in the run")
    if start >= end:
        raise PrometheusError("query window: start %s is not before end %s" % (_iso(start), _iso(end)))
    return start, end


def _iso(ts):
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).isoformat(timespec="seconds")


# --------------------------------------------------------------------------
# operations


def reset(client, mode, dest_dir, now=time.time):
    if mode not in RESET_MODES:
        raise PrometheusError("mode %r: expected one of %s" % (mode, ", ".join(RESET_MODES)))
    if mode == "reset":
        client.delete_all_series()
    stamp = now()
    record = {"ts": stamp, "time": _iso(stamp), "mode": mode, "prometheus_url": client.url}
    artifacts.write_json_atomic(os.path.join(dest_dir, RESET_RECORD), record)
    return record


def query(client, queries, start, end, step, dest_dir):
    """Run every query (``load_query_file``'s mapping) over the window; write one JSON per query and
    the index (each query's description, file, series and sample counts). A query that fails is
    recorded in the index (its error) and the others still run; returns the index."""
    index = {"start": start, "end": end, "start_time": _iso(start), "end_time": _iso(end), "step_s": step,
             "prometheus_url": client.url, "queries": {}}
    for name, spec in queries.items():
        spec = {"query": spec} if isinstance(spec, str) else dict(spec)
        try:
            data = client.query_range(spec["query"], start, end, step)
        except PrometheusError as exc:
            index["queries"][name] = dict(spec, error=str(exc))
            continue
        artifacts.write_json_atomic(os.path.join(dest_dir, name + ".json"), {"query": spec["query"], "data": data})
        series = data["result"]
        index["queries"][name] = dict(spec, file=name + ".json", series=len(series),
                                      samples=sum(len(item.get("values") or []) for item in series))
    artifacts.write_json_atomic(os.path.join(dest_dir, QUERIES_INDEX), index)
    return index


def snapshot(client, dest_dir, prefix, data_dir=None):
    """Snapshot the TSDB; packed as ``<prefix>.tar.gz`` when ``data_dir`` (the server's) is readable here."""
    name = client.snapshot()
    record = {"snapshot": name, "prometheus_url": client.url, "archive": None}
    if data_dir:
        source = os.path.join(data_dir, "snapshots", name or "")
        if not name or not os.path.isdir(source):
            raise PrometheusError("prometheus_data_dir %s: no snapshot %s in it (is it this Prometheus's "
                                  "--storage.tsdb.path?)" % (data_dir, name))
        archive = os.path.join(dest_dir, "%s.tar.gz" % prefix)
        partial = archive + ".partial"
        with tarfile.open(partial, "w:gz") as tar:
            tar.add(source, arcname=prefix)
        os.replace(partial, archive)
        record["archive"] = os.path.basename(archive)
    artifacts.write_json_atomic(os.path.join(dest_dir, "snapshot.json"), record)
    return record


# --------------------------------------------------------------------------
# one operation, as the toolbox commands ask for it (shared by the prometheus_db action, by URL,
# and the k8s_prometheus_db module, through the API server)


def _reset_operation(client, params, dest_dir, _run_root):
    record = reset(client, params["mode"], dest_dir)
    return {"changed": params["mode"] == "reset", "record": record,
            "msg": "%s at %s (%s)" % ("reset" if params["mode"] == "reset" else "marked", record["time"], client.url)}


def _query_operation(client, params, dest_dir, run_root):
    if not params.get("promquery_file"):
        raise PrometheusError("promquery_file: required to query")
    queries = load_query_file(params["promquery_file"])
    start, end = window(params.get("start_ts"), params.get("end_ts"), params.get("duration_s") or 0, run_root)
    index = query(client, queries, start, end, params["step_s"], dest_dir)
    failed = sorted(name for name, item in index["queries"].items() if "error" in item)
    result = {"changed": True, "index": index, "msg": "%d of %d query(ies) over %s .. %s" % (
        len(queries) - len(failed), len(queries), index["start_time"], index["end_time"])}
    if failed:
        result.update(failed=True, msg="%s; failed: %s" % (result["msg"], "; ".join(
            index["queries"][name]["error"] for name in failed)))
    return result


def _snapshot_operation(client, params, dest_dir, _run_root):
    record = snapshot(client, dest_dir, params["dump_name_prefix"], params.get("prometheus_data_dir"))
    where = (" packed as %s" % record["archive"]) if record["archive"] else \
        " (kept by the Prometheus server; give prometheus_data_dir to pack it into the artifacts)"
    return {"changed": True, "record": record, "msg": "snapshot %s%s" % (record["snapshot"], where)}


OPERATIONS = {"reset": _reset_operation, "query": _query_operation, "snapshot": _snapshot_operation}


def operation_argument_spec():
    """The options of an operation, the same for every adapter (the by-URL action ``prometheus_db``,
    the in-cluster module ``k8s_prometheus_db``); each adds how it reaches the Prometheus."""
    return dict(
        operation=dict(type="str", required=True, choices=list(OPERATIONS)),
        mode=dict(type="str", default="reset", choices=list(RESET_MODES)),
        promquery_file=dict(type="path"),
        start_ts=dict(type="str"),
        end_ts=dict(type="str"),
        duration_s=dict(type="float", default=0),
        step_s=dict(type="float", default=15),
        dump_name_prefix=dict(type="str", default="prometheus"),
        timeout_s=dict(type="float", default=30),
    )


def run_operation(client, operation, params, dest_dir, run_root=None):
    """Run ``operation`` (``OPERATIONS``) with the command's parameters; returns the task's result
    (``changed``, ``msg``, ``failed`` when a query failed, the record or index)."""
    if params.get("step_s") is not None and params["step_s"] <= 0:
        raise PrometheusError("step_s %s: expected a number of seconds > 0" % params["step_s"])
    return OPERATIONS[operation](client, params, dest_dir, run_root)


def choose_pod(pods, namespace, label):
    """The Prometheus pod among ``pods`` (dicts; those the label selects): the first Running one by
    name (a StatefulSet's ``-0`` replica)."""
    running = sorted((pod for pod in pods if (pod.get("status") or {}).get("phase") == "Running"),
                     key=lambda pod: pod["metadata"]["name"])
    if not running:
        raise PrometheusError("no Running pod labelled %s in namespace %s (%d pod(s) found); is Prometheus there, or "
                              "give prometheus_url" % (label, namespace, len(pods)))
    return running[0]["metadata"]["name"]
