#!/usr/bin/env python3
"""The import graph of the collection's Python (plugins/) and of kubesim/: no cycle, and no import
from a lower layer to a higher one (the layers: ``LAYERS`` below, written down in
docs/architecture.md). Every import counts, at the top of a module or inside a function: a lazy
import is a dependency all the same.

    python tools/import_check.py            # one line per problem; exit 1 when there is one
    python tools/import_check.py --graph    # every module's layer and imports, for reading

Plain Python (ast), nothing imported from the modules it reads.
"""

import argparse
import ast
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTION_PREFIX = "ansible_collections.perfscale.topsail."

# (prefix of a dotted module name, layer): the longest matching prefix wins; a module may import
# from its own layer and the layers below, never above. Lower numbers are lower layers.
LAYERS = [
    # 0. the errors every domain raises
    ("plugins.module_utils.errors", 0),
    # 1. files and input from outside: artifact directories, the run lock, path and input bounds,
    #    secrets, dotted keys, the collection's own location
    ("plugins.module_utils.safe_paths", 1),
    ("plugins.module_utils.bounded_input", 1),
    ("plugins.module_utils.config.secrets", 1),
    # JSON over HTTP with bounds and rate limits (the notifiers' and Horreum's client)
    ("plugins.module_utils.json_http", 1),
    ("plugins.module_utils.config.dotted", 1),
    ("plugins.module_utils.run.artifacts", 1),
    ("plugins.module_utils.run.lock", 1),
    ("plugins.module_utils.run.collection_info", 1),
    # 2. the configuration as documents: loading, presets, overrides, launch arguments
    ("plugins.module_utils.config", 2),
    # 3. the engines and their registries, whose names the schema offers: the matrix and where its
    #    points run (executors, the Tekton pipeline), harnesses, stores, regression methods and baseline policies
    ("plugins.module_utils.matrix.engine", 3),
    ("plugins.module_utils.matrix.tekton_pipeline", 3),
    ("plugins.module_utils.executors", 3),
    # the inventory hosts' executor: plans a host's share with matrix/engine (3), runs it with the local one
    ("plugins.module_utils.executors.inventory_hosts", 3),
    ("plugins.module_utils.kube.validation", 3),
    ("plugins.module_utils.kube.names", 3),
    ("plugins.module_utils.harnesses", 3),
    ("plugins.module_utils.stores", 3),
    ("plugins.module_utils.regression.maths", 3),
    ("plugins.module_utils.regression.segments", 3),
    ("plugins.module_utils.regression.methods", 3),
    ("plugins.module_utils.regression.baselines", 3),
    # 5. the domains on top (each with the model of its own configuration section): planning a benchmark,
    #    toolbox and flows, analysis, verdicts, export, transfer, kube helpers, parsers; above them all, the
    #    list of every section's model and the check of a whole configuration before work (config_sections)
    ("plugins.module_utils", 5),
    ("plugins.module_utils.stores.export", 5),
    # the users of a multi-user test: pods whose results come back as the kubernetes executor's points do
    ("plugins.module_utils.executors.multi_user", 5),
    # 6-7. the plugins (modules, action, filter, lookup, callback plugins) on module_utils
    ("plugins.plugin_utils", 6),
    ("plugins", 7),
    # kubesim: a separate tree (it imports nothing of the collection's)
    ("kubesim", 10),
]


def layer_of(module):
    best, layer = -1, None
    for prefix, number in LAYERS:
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
            best, layer = len(prefix), number
    return layer


def module_files():
    """{dotted module name (without the collection prefix): path} for plugins/ and kubesim/."""
    found = {}
    for top in ("plugins", "kubesim"):
        for directory, dirnames, filenames in os.walk(os.path.join(REPO, top)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if not name.endswith(".py"):
                    continue
                relative = os.path.relpath(os.path.join(directory, name), REPO)[:-3].split(os.sep)
                if relative[-1] == "__init__":
                    relative = relative[:-1]
                found[".".join(relative)] = os.path.join(directory, name)
    return found


def _resolve(module, is_package, level, target):
    if not level:
        return target
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(module, path, known):
    """(the known modules ``module`` imports (a ``from X import name`` of a submodule counts as
    it), the packages above them whose ``__init__`` runs first (see ``with_packages``))."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    is_package = path.endswith("__init__.py")
    found = set()
    packages = set()

    # importing pkg.sub runs pkg/__init__.py first: the packages above a target count as imported,
    # except the importer's own (already initialised when the importer runs)
    own_packages = {module.rsplit(".", depth)[0] for depth in range(1, module.count(".") + 1)}
    if is_package:
        own_packages.add(module)

    def add(name):
        if name.startswith(COLLECTION_PREFIX):
            name = name[len(COLLECTION_PREFIX):]
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.add(name)
        package = name.rpartition(".")[0]
        while package:
            if package in known and package not in own_packages and package != module:
                packages.add(package)
            package = package.rpartition(".")[0]

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node.level, node.module or "")
            for alias in node.names:
                full = base + "." + alias.name
                stripped = full[len(COLLECTION_PREFIX):] if full.startswith(COLLECTION_PREFIX) else full
                add(full if stripped in known else base)
    return found, packages


def with_packages(direct, packages):
    """The import graph with the packages a module's imports initialise: a package whose
    ``__init__`` imports something (a registry importing its members) is a real step of the import,
    one with a bare docstring is not."""
    return {module: direct[module] | {package for package in packages[module] if direct.get(package)}
            for module in direct}


def import_graph(files):
    """{module: the modules its import runs} for ``files`` ({module: path}, see ``module_files``)."""
    found = {module: imports_of(module, path, files) for module, path in files.items()}
    return with_packages({module: pair[0] for module, pair in found.items()},
                         {module: pair[1] for module, pair in found.items()})


def strongly_connected(graph):
    """Tarjan's algorithm, iterative: the components of more than one module (or a self-loop)."""
    index, low, on_stack, stack, components, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def problems(graph):
    lines = []
    for component in strongly_connected(graph):
        lines.append("import cycle: %s" % " <-> ".join(component))
    for module in sorted(graph):
        for target in sorted(graph[module]):
            source_layer, target_layer = layer_of(module), layer_of(target)
            if source_layer is not None and target_layer is not None and target_layer > source_layer:
                lines.append("upward import: %s (layer %d) imports %s (layer %d)"
                             % (module, source_layer, target, target_layer))
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", action="store_true", help="print every module's layer and imports")
    args = parser.parse_args(argv)
    files = module_files()
    graph = import_graph(files)
    if args.graph:
        for module in sorted(graph):
            print("%s [%s]: %s" % (module, layer_of(module), ", ".join(sorted(graph[module]))))
        return 0
    found = problems(graph)
    for line in found:
        print(line)
    print("import check: %d modules, %d imports, %d problem(s)"
          % (len(graph), sum(len(v) for v in graph.values()), len(found)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
