#!/usr/bin/env python3
"""Move a module of ``plugins/module_utils`` into a package, and rewrite every reference to it.

    python tools/move_module.py gpu_burn parsers.gpu_burn [htpasswd parsers.htpasswd ...]

Each OLD NEW pair is a dotted path under ``plugins/module_utils``. The file is moved with
``git mv`` (the new package gets an ``__init__.py``), then every tracked file of the repository
is rewritten: ``from ...module_utils import old [as x]`` (one name of several included),
``from ...module_utils.old import x``, dotted references in strings (``mock.patch`` targets,
documentation) and file paths (``plugins/module_utils/old.py``, in roles' templates and docs).
The local name an import binds never changes (``as old`` is added when the new module's name
differs). It writes only the repository's tracked files; ``tools/import_check.py`` and the tests
say whether the result holds.
"""

import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PREFIX = "ansible_collections.perfscale.topsail.plugins.module_utils"
TEXT_SUFFIXES = (".py", ".md", ".yml", ".yaml", ".j2", ".txt", ".cfg", ".toml", ".sh", ".rst", ".json")


def tracked_files():
    out = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return [path for path in out.splitlines() if path.endswith(TEXT_SUFFIXES) and os.path.isfile(os.path.join(REPO, path))]


def split_parent(dotted):
    parent, _dot, name = dotted.rpartition(".")
    return parent, name


def rewrite_text(text, old, new):
    old_parent, old_name = split_parent(old)
    new_parent, new_name = split_parent(new)
    old_from = PREFIX + ("." + old_parent if old_parent else "")
    new_from = PREFIX + ("." + new_parent if new_parent else "")

    # from P import a, old as x, b   ->   from P import a, b \n from P.new_parent import new as x
    pattern = re.compile(r"^(?P<indent>[ \t]*)from %s import (?P<names>[^()\n]+?)(?P<tail>[ \t]*(#.*)?)$"
                         % re.escape(old_from), re.M)

    def one_import(match):
        names = [part.strip() for part in match.group("names").split(",")]
        kept, moved = [], None
        for part in names:
            name, _as, alias = part.partition(" as ")
            if name.strip() == old_name:
                moved = (alias.strip() or old_name)
            else:
                kept.append(part)
        if moved is None:
            return match.group(0)
        indent, tail = match.group("indent"), match.group("tail") or ""
        alias = "" if moved == new_name else " as %s" % moved
        lines = []
        if kept:
            lines.append("%sfrom %s import %s%s" % (indent, old_from, ", ".join(kept), tail))
        lines.append("%sfrom %s import %s%s%s" % (indent, new_from, new_name, alias, "" if kept else tail))
        return "\n".join(lines)

    # dotted paths first: P.old[.x] (from-imports of the module's names, strings, import statements);
    # then the imports of the module itself (their new text holds P.<new parent>, which may be P.old)
    text = re.sub(r"%s\.%s\b" % (re.escape(PREFIX), re.escape(old)), "%s.%s" % (PREFIX, new), text)
    text = pattern.sub(one_import, text)
    # file paths
    old_path = "plugins/module_utils/%s" % old.replace(".", "/")
    new_path = "plugins/module_utils/%s" % new.replace(".", "/")
    text = re.sub(r"%s(\.py\b|/)" % re.escape(old_path), lambda m: new_path + m.group(1), text)
    text = re.sub(r"(?<![\w/.])module_utils/%s\.py\b" % re.escape(old.replace(".", "/")),
                  "module_utils/%s.py" % new.replace(".", "/"), text)
    return text


def move(old, new):
    source = os.path.join(REPO, "plugins", "module_utils", *old.split(".")) + ".py"
    target = os.path.join(REPO, "plugins", "module_utils", *new.split(".")) + ".py"
    if not os.path.isfile(source):
        raise SystemExit("move_module: %s: no such module (expected %s)" % (old, source))
    if os.path.exists(target):
        raise SystemExit("move_module: %s: %s exists already" % (new, target))
    package = os.path.dirname(target)
    os.makedirs(package, exist_ok=True)
    init = os.path.join(package, "__init__.py")
    if not os.path.exists(init):
        with open(init, "w", encoding="utf-8") as handle:
            handle.write("")
        subprocess.run(["git", "add", init], cwd=REPO, check=True)
    subprocess.run(["git", "mv", source, target], cwd=REPO, check=True)
    changed = 0
    for path in tracked_files():
        full = os.path.join(REPO, path)
        with open(full, encoding="utf-8") as handle:
            text = handle.read()
        new_text = rewrite_text(text, old, new)
        if new_text != text:
            with open(full, "w", encoding="utf-8") as handle:
                handle.write(new_text)
            changed += 1
    print("%s -> %s: %d file(s) rewritten" % (old, new, changed))


def main(argv):
    if len(argv) < 2 or len(argv) % 2:
        raise SystemExit("usage: move_module.py OLD NEW [OLD NEW ...] (dotted paths under plugins/module_utils)")
    for old, new in zip(argv[::2], argv[1::2]):
        move(old, new)


if __name__ == "__main__":
    main(sys.argv[1:])
