"""Build ``messages.json`` (the field table of the protobuf decoder) from Kubernetes' ``generated.proto`` files.

    python -m kubesim.protobuf.generate /path/to/kubernetes/api /path/to/kubernetes/apimachinery

Reads the proto2 messages of the API groups kubesim serves and of apimachinery
(ObjectMeta, Time, Quantity, IntOrString, runtime.Unknown), keeps those reachable
from the served kinds, and writes, per message, ``{field number: [json name,
type, "repeated"|"map"|"", inline]}``. A message field whose name is not a
property of the kind's OpenAPI definition (kubernetes-validate) is inlined in
JSON (``Volume.volumeSource``, ``IngressRule.ingressRuleValue``...).
"""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIELD = re.compile(r"^\s*(optional|repeated)?\s*([.\w]+)\s+(\w+)\s*=\s*(\d+)\s*;")
MAP = re.compile(r"^\s*map<\s*(\w+)\s*,\s*([.\w]+)\s*>\s+(\w+)\s*=\s*(\d+)\s*;")
SCALARS = {"string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "double", "float", "sint32", "sint64",
           "fixed32", "fixed64"}
API_FILES = ["core/v1", "apps/v1", "batch/v1", "rbac/v1", "storage/v1", "coordination/v1", "scheduling/v1",
             "networking/v1", "policy/v1", "autoscaling/v2", "autoscaling/v1"]
MACHINERY_FILES = ["pkg/apis/meta/v1", "pkg/api/resource", "pkg/util/intstr", "pkg/runtime", "pkg/runtime/schema"]


def git_show(repo, path):
    return subprocess.run(["git", "-C", repo, "show", "HEAD:" + path], capture_output=True, text=True, check=True).stdout


def parse(text):
    package = re.search(r"^package ([\w.]+);", text, re.M).group(1)
    messages = {}
    current = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("//") or not stripped:
            continue
        match = re.match(r"^message (\w+) \{", stripped)
        if match:
            current = messages.setdefault("%s.%s" % (package, match.group(1)), {})
            continue
        if stripped == "}":
            current = None
            continue
        if current is None:
            continue
        found = MAP.match(line)
        if found:
            key, value, name, number = found.groups()
            current[int(number)] = [name, _qualify(value, package), "map", False]
            continue
        found = FIELD.match(line)
        if found:
            label, kind, name, number = found.groups()
            current[int(number)] = [name, _qualify(kind, package), "repeated" if label == "repeated" else "", False]
    return messages


def _qualify(kind, package):
    if kind in SCALARS:
        return kind
    if kind.startswith("."):
        return kind[1:]
    return "%s.%s" % (package, kind)


def main(argv=None):
    api_repo, machinery_repo = (argv or sys.argv[1:])[:2]
    messages = {}
    for path in API_FILES:
        messages.update(parse(git_show(api_repo, path + "/generated.proto")))
    for path in MACHINERY_FILES:
        messages.update(parse(git_show(machinery_repo, path + "/generated.proto")))
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    from kubesim.cluster import load_validation_module
    from kubesim.resources import builtin_resources
    validation = load_validation_module()
    validator = validation.ManifestValidator()
    definitions = validator.definitions
    kinds = {}
    for resource in builtin_resources():
        group = resource.group or "core"
        name = "k8s.io.api.%s.%s.%s" % (group.split(".")[0], resource.version, resource.kind)
        if name in messages:
            kinds["%s/%s" % (resource.api_version, resource.kind)] = name
    for name, fields in messages.items():
        definition = definitions.get("io.k8s." + name[len("k8s.io."):]) if name.startswith("k8s.io.") else None
        properties = set(((definition or {}).get("properties") or {}))
        for entry in fields.values():
            if definition is not None and entry[1] in messages and entry[0] not in properties and entry[2] == "":
                entry[3] = True  # an embedded struct, inlined in JSON
    reachable, todo = set(), list(kinds.values()) + ["k8s.io.apimachinery.pkg.runtime.Unknown"]
    while todo:
        name = todo.pop()
        if name in reachable or name not in messages:
            continue
        reachable.add(name)
        todo.extend(entry[1] for entry in messages[name].values() if entry[1] in messages)
    table = {"kinds": kinds, "messages": {n: {str(k): v for k, v in sorted(messages[n].items())} for n in sorted(reachable)}}
    api_commit = subprocess.run(["git", "-C", api_repo, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    machinery_commit = subprocess.run(["git", "-C", machinery_repo, "rev-parse", "HEAD"], capture_output=True,
                                      text=True).stdout.strip()
    table["source"] = {"kubernetes/api": api_commit, "kubernetes/apimachinery": machinery_commit}
    with open(os.path.join(HERE, "messages.json"), "w", encoding="utf-8") as handle:
        json.dump(table, handle, separators=(",", ":"), sort_keys=True)
        handle.write("\n")
    print("%d kinds, %d messages" % (len(kinds), len(reachable)))


if __name__ == "__main__":
    main()
