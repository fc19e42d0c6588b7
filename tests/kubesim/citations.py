"""The upstream citations of kubesim and of the roles' waits: ``(repository, commit, path)`` triples.

Sources (each a "where" a citation is read from):

- ``kubesim/upstream.py``: every :data:`kubesim.upstream.SOURCES` entry with a repository;
- the module docstrings of ``kubesim/controllers/*.py`` and of
  ``plugins/module_utils/kube/waits/*.py``: every ``owner/repo @ <40 hex>`` mention (``owner/repo
  branch X @ <40 hex>`` too) and the paths that follow it in the same bullet or paragraph;
- the judges of ``plugins/module_utils/kube/waits/`` (their ``upstream = (repository URL, files)``),
  at the commit their module's docstring names for that repository (or one written in the files);
- the provenance of every corpus file (``tests/fixtures/upstream/*/*.yaml``).

A path is a token with a slash whose segments are lowercase (a directory: conformance/tests) or
that ends in a file name with an extension; a bare file name (router.go) is in the directory of
the path before it. Parenthesised remarks are not paths, nor are RST literals that name no file
(labels such as ``gpu.slices.gi/ci``, state pairs such as ``pending``/``rebooting``). In
kubesim/upstream.py, an ``owner/repo @ <commit>`` inside a source's files starts that repository's
paths. Citations without a commit cannot be checked at a commit and are returned apart
(:func:`uncommitted`).
"""

import ast
import glob
import os
import re

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CONTROLLERS = os.path.join(ROOT, "kubesim", "controllers")
WAITS = os.path.join(ROOT, "plugins", "module_utils", "kube", "waits")
CORPUS = os.path.join(ROOT, "tests", "fixtures", "upstream")
LISTING = os.path.join(CORPUS, "cited-paths.json")

REPO = r"([A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*)"
MENTION = re.compile(REPO + r"(?:,?\s+(?:branch|main|master)\s*[\w./-]*)?\s+@\s+([0-9a-f]{40})")
COMMIT = re.compile(r"\b([0-9a-f]{40})\b")
EXTENSIONS = ("go", "md", "yaml", "yml", "tmpl", "proto", "py", "json", "txt", "sh")
TOKEN = re.compile(r"[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*")
# words with a slash that are prose, not paths (a state pair, an alternative)
NOT_PATHS = {"and/or", "get/list", "e/g"}
# this repository's own files (named beside citations)
LOCAL = ("kubesim/", "docs/", "tests/", "roles/", "plugins/")


class Citation(tuple):
    """``(where, repository, commit, path)``; ``repository`` is ``owner/name``."""

    def __new__(cls, where, repository, commit, path):
        return tuple.__new__(cls, (where, repository, commit, path))

    where = property(lambda self: self[0])
    repository = property(lambda self: self[1])
    commit = property(lambda self: self[2])
    path = property(lambda self: self[3])

    def key(self):
        return self.repository, self.commit, self.path


def _repository(text):
    text = text.strip().rstrip("/")
    if "github.com/" in text:
        text = text.split("github.com/", 1)[1]
    return text[:-4] if text.endswith(".git") else text


def _literal(match):
    """An RST literal's text when it names a file (``controller.go``), else nothing: a value, not a path."""
    content = match.group(1)
    name = content.rsplit("/", 1)[-1]
    return content if "." in name and name.rsplit(".", 1)[1] in EXTENSIONS else " "


def _strip_remarks(text):
    """Parenthesised remarks out (nested ones too), and RST literals unwrapped (those naming a file) or out."""
    text = re.sub(r"``([^`]*)``", _literal, text)
    previous = None
    while previous != text:
        previous = text
        text = re.sub(r"\([^()]*\)", " ", text)
    return text


def _is_path(token):
    if token in NOT_PATHS or token.startswith(("http", "www.")) or token.endswith("/"):
        return False
    if re.fullmatch(r"[a-z0-9-]+(\.[a-z0-9-]+)*\.(io|com|org|dev|ai|net)", token.split("/")[0]):
        return False  # a label or annotation name (feature.node.kubernetes.io/...), not a path
    if "/" not in token:
        return "." in token and token.rsplit(".", 1)[1] in EXTENSIONS
    segments = token.split("/")
    if segments[-1].rsplit(".", 1)[-1] in EXTENSIONS and "." in segments[-1]:
        return True
    return all(re.fullmatch(r"[a-z0-9_.-]+", s) for s in segments) and not any(s.isdigit() for s in segments)


def paths_in(text):
    """The paths a files text cites, in order (bare file names completed with the previous directory)."""
    found = []
    directory = None
    for token in TOKEN.findall(_strip_remarks(text)):
        token = token.strip(".,;:")
        if not _is_path(token):
            continue
        if "/" not in token:
            if directory is None:
                continue
            token = directory + "/" + token
        elif "." in token.rsplit("/", 1)[1]:
            directory = token.rsplit("/", 1)[0]
        else:
            directory = token
        if token not in found:
            found.append(token)
    return found


def _segments(text):
    """``(repository, commit, text)`` for each mention, the text running to the end of its bullet or paragraph
    or to the next mention."""
    matches = list(MENTION.finditer(text))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        tail = text[match.end() : end]
        stop = re.search(r"\n\s*\n|\n\s*- ", tail)
        if stop:
            tail = tail[: stop.start()]
        yield _repository(match.group(1)), match.group(2), tail


def docstring_citations(where, text):
    citations = []
    repositories = {_repository(m.group(1)) for m in re.finditer(REPO + r"\s+@", text or "")}
    for repository, commit, tail in _segments(text or ""):
        for path in paths_in(tail):
            if path in repositories or path.startswith(LOCAL):
                continue
            citations.append(Citation(where, repository, commit, path))
    return citations


def _module_docstring(path):
    with open(path, encoding="utf-8") as handle:
        return ast.get_docstring(ast.parse(handle.read())) or ""


def _source_parts(repository, commit, files):
    """``(repository, commit, text)``: a source's files, the text after an ``owner/repo @ <commit>`` mention
    (``...; MIG: NVIDIA/k8s-device-plugin @ <commit> internal/lm/...``) read at that repository and commit."""
    matches = list(MENTION.finditer(files))
    yield repository, commit, files[: matches[0].start()] if matches else files
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(files)
        yield _repository(match.group(1)), match.group(2), files[match.end() : end]


def upstream_py_citations():
    from kubesim import upstream

    citations = []
    for name, source in sorted(upstream.SOURCES.items()):
        if source.repository is None:
            continue
        for repository, commit, text in _source_parts(_repository(source.repository), source.commit, source.files):
            for path in paths_in(text):
                citations.append(Citation("kubesim/upstream.py (%s)" % name, repository, commit, path))
    return citations


def controller_citations():
    citations = []
    for path in sorted(glob.glob(os.path.join(CONTROLLERS, "*.py"))):
        where = os.path.relpath(path, ROOT)
        citations += docstring_citations(where, _module_docstring(path))
    return citations


def _judge_sources(path):
    """``[(repository URL, files)]`` of the ``upstream = (...)`` tuples of a waits module (read, not imported)."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    names = {}
    tuples = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node.value.value
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 2:
            parts = []
            for element in node.value.elts:
                if isinstance(element, ast.Constant) and isinstance(element.value, str):
                    parts.append(element.value)
                elif isinstance(element, ast.Name) and element.id in names:
                    parts.append(names[element.id])
            if len(parts) == 2 and "github.com/" in parts[0]:
                tuples.append(tuple(parts))
    return tuples


def waits_citations():
    """``(citations, uncommitted)``: the judges' and docstrings' citations of the waits modules."""
    citations, uncommitted = [], []
    for path in sorted(glob.glob(os.path.join(WAITS, "*.py"))):
        where = os.path.relpath(path, ROOT)
        docstring = _module_docstring(path)
        citations += docstring_citations(where, docstring)
        segments = list(_segments(docstring))
        # "main @ <commit>": a path followed by "(main)" is read at that commit
        branches = dict(re.findall(r"\b([a-z][\w.-]*)\s+@\s+([0-9a-f]{40})", docstring))
        for url, files in _judge_sources(path):
            repository = _repository(url)
            # a second repository named inside the files text ("...; kubeflow/pipelines backend/...") starts its own
            parts = re.split(r";\s*(?=" + REPO + r"\s)", files)
            for index, part in enumerate(parts):
                repo = repository
                if index:
                    repo = _repository(part.split()[0])
                    part = part.split(None, 1)[1] if len(part.split(None, 1)) > 1 else ""
                written = COMMIT.search(part)
                for cited, branch in _paths_with_branches(part):
                    commit = (
                        written.group(1)
                        if written
                        else branches.get(branch) if branch in branches else _segment_commit(segments, repo, cited)
                    )
                    if commit is None:
                        uncommitted.append(Citation(where, repo, None, cited))
                    else:
                        citations.append(Citation(where, repo, commit, cited))
    return citations, uncommitted


def _paths_with_branches(text):
    """``(path, branch or None)``: a path followed by a parenthesised branch name ("(main)", "(stable-2.x)")."""
    branch_of = {}
    for chunk in re.split(r",\s*", text):
        remark = re.search(r"\(([\w.-]+)\)", chunk)
        if remark:
            for token in TOKEN.findall(_strip_remarks(chunk)):
                branch_of.setdefault(token.strip(".,;:"), remark.group(1))
    return [(cited, branch_of.get(cited)) for cited in paths_in(text)]


def _segment_commit(segments, repository, cited):
    """The commit the docstring names for ``repository``: the mention whose text cites ``cited`` (or its
    directory), else the first mention; None when it names none."""
    candidates = [(commit, tail) for repo, commit, tail in segments if repo == repository]
    for commit, tail in candidates:
        if cited in tail or cited.rsplit("/", 1)[0] in tail:
            return commit
    return candidates[0][0] if candidates else None


def corpus_citations():
    citations = []
    for path in sorted(glob.glob(os.path.join(CORPUS, "*", "*.yaml"))):
        with open(path, encoding="utf-8") as handle:
            provenance = yaml.safe_load(handle)["provenance"]
        citations.append(
            Citation(
                os.path.relpath(path, ROOT),
                _repository(provenance["repository"]),
                provenance["commit"],
                provenance["path"],
            )
        )
    return citations


def all_citations():
    """Every checkable citation, and the waits' citations that name no commit."""
    waits, uncommitted = waits_citations()
    return upstream_py_citations() + controller_citations() + waits + corpus_citations(), uncommitted


def uncommitted():
    return all_citations()[1]
