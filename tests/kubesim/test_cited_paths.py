"""Citations that must exist: every upstream path kubesim, the roles' waits and the reality corpus cite
exists at the commit they cite, as the vendored listing tests/fixtures/upstream/cited-paths.json records
it (offline: the listing was made by reading each path at its commit, "how" says with what).

The citations are read from their sources by tests/kubesim/citations.py; a citation the listing does not
hold, or holds as absent, fails with one line naming the file, the citation and what exists instead.
"""

import collections
import json
import os

import pytest

import citations

with open(citations.LISTING, encoding="utf-8") as _handle:
    LISTING = {(row["repository"], row["commit"], row["path"]): row for row in json.load(_handle)["paths"]}

CITED, UNCOMMITTED = citations.all_citations()


def _group(citation):
    """The test a citation belongs to: its source file (the corpus: per project)."""
    where = citation.where.split(" (")[0]
    if where.startswith("tests/fixtures/upstream/"):
        return "tests/fixtures/upstream/%s" % where.split("/")[3]
    return where


GROUPS = collections.OrderedDict()
for _citation in sorted(CITED, key=lambda c: (_group(c), c.key())):
    GROUPS.setdefault(_group(_citation), []).append(_citation)

# sources whose wrong citations belong to engineers working on them now (issue 44): they flip when fixed
KNOWN_WRONG = {}

# citations no offline check could read at their commit (cited-paths.json: exists null, "how" says why)
UNVERIFIED = {
    ("kubernetes/kubernetes", "008b3652959ca58af8be3fb5b6ecfe9ae7638282", "pkg/controller/deployment/sync.go"),
    ("kubernetes/kubernetes", "00a3928bde544dbb4fd046bb78439178ec37fb5a", "pkg/kubelet/images/types.go"),
    ("kubernetes/kubernetes", "00a3928bde544dbb4fd046bb78439178ec37fb5a", "pkg/kubelet/status/generate.go"),
    ("kubernetes/kubernetes", "00a3928bde544dbb4fd046bb78439178ec37fb5a", "pkg/scheduler/framework/types.go"),
}


def problems(cited, listing):
    """One line per citation the listing does not show present."""
    lines = []
    for citation in cited:
        key = citation.key()
        row = listing.get(key)
        name = "%s@%s:%s" % (citation.repository, citation.commit[:12], citation.path)
        if row is None:
            lines.append(
                "%s: %s is not in tests/fixtures/upstream/cited-paths.json (check it at its commit and add it)"
                % (citation.where, name)
            )
        elif row["exists"] is False:
            instead = row.get("instead")
            lines.append(
                "%s: %s does not exist at that commit%s"
                % (citation.where, name, "; instead: %s" % instead if instead else "")
            )
        elif row["exists"] is None and key not in UNVERIFIED:
            lines.append("%s: %s was never verified (%s)" % (citation.where, name, row.get("how")))
    return lines


def group_params():
    for group, cited in GROUPS.items():
        marks = (
            [pytest.mark.xfail(strict=True, reason="issue 44: " + KNOWN_WRONG[group])] if group in KNOWN_WRONG else []
        )
        yield pytest.param(group, cited, marks=marks, id=group)


@pytest.mark.parametrize("group,cited", list(group_params()))
def test_every_cited_path_exists_at_the_cited_commit(group, cited):
    found = problems(cited, LISTING)
    assert not found, "\n".join(found)


def test_the_sources_are_read():
    """Each kind of source yields its citations (an extractor that finds nothing would pass everything)."""
    from kubesim import upstream

    groups = set(GROUPS)
    assert "kubesim/upstream.py" in groups
    with_repository = [name for name, source in upstream.SOURCES.items() if source.repository]
    read = {c.where.split(" (")[1].rstrip(")") for c in CITED if c.where.startswith("kubesim/upstream.py (")}
    assert set(with_repository) == read, set(with_repository) - read
    for module in (
        "kubesim/controllers/olm.py",
        "kubesim/controllers/tekton.py",
        "kubesim/controllers/odh.py",
        "plugins/module_utils/kube/waits/olm.py",
        "plugins/module_utils/kube/waits/training.py",
    ):
        assert module in groups, module
    corpus_files = [c for c in CITED if c.where.startswith("tests/fixtures/upstream/")]
    assert len(corpus_files) == len({c.where for c in corpus_files}) >= 100


def test_the_listing_holds_only_cited_paths_and_says_how_each_was_checked():
    cited = {c.key() for c in CITED}
    assert set(LISTING) == cited, "rows nothing cites: %s; citations without a row: %s" % (
        sorted(set(LISTING) - cited)[:5],
        sorted(cited - set(LISTING))[:5],
    )
    for key, row in LISTING.items():
        assert row["exists"] in (True, False, None) and row["how"] and row["date"], key
    assert {k for k, row in LISTING.items() if row["exists"] is None} == UNVERIFIED


def test_a_wrong_citation_is_one_line_naming_file_citation_and_what_exists_instead():
    docstring = (
        "Upstream sources:\n- ``x``: opendatahub-io/opendatahub-operator @ "
        "6d30a3241082501fd5b930408906eaeb62f99d59; files: controllers/datasciencecluster, "
        "pkg/never/cited.go.\n"
    )
    cited = citations.docstring_citations("kubesim/controllers/example.py", docstring)
    assert [c.path for c in cited] == ["controllers/datasciencecluster", "pkg/never/cited.go"]
    # the operator moved its controllers under internal/ before this commit: a row recording the absence
    absent = {
        "repository": "opendatahub-io/opendatahub-operator",
        "commit": "6d30a3241082501fd5b930408906eaeb62f99d59",
        "path": "controllers/datasciencecluster",
        "exists": False,
        "instead": "internal/controller/datasciencecluster",
    }
    listing = dict(LISTING)
    listing[(absent["repository"], absent["commit"], absent["path"])] = absent
    assert problems(cited, listing) == [
        "kubesim/controllers/example.py: "
        "opendatahub-io/opendatahub-operator@6d30a3241082:controllers/datasciencecluster "
        "does not exist at that commit; instead: internal/controller/datasciencecluster",
        "kubesim/controllers/example.py: opendatahub-io/opendatahub-operator@6d30a3241082:pkg/never/cited.go is not "
        "in tests/fixtures/upstream/cited-paths.json (check it at its commit and add it)",
    ]


def test_paths_are_read_as_written():
    assert citations.paths_in(
        "pkg/controller/v1alpha2/llmisvc/controller.go, router.go, "
        "pkg/apis/serving/v1alpha2/llm_inference_service_lifecycle.go"
    ) == [
        "pkg/controller/v1alpha2/llmisvc/controller.go",
        "pkg/controller/v1alpha2/llmisvc/router.go",
        "pkg/apis/serving/v1alpha2/llm_inference_service_lifecycle.go",
    ]
    # remarks, state pairs and label names are not paths
    assert citations.paths_in(
        "pkg/cvo/status.go (Available/Progressing), feature.node.kubernetes.io/pci-10de.present, " "True/False"
    ) == ["pkg/cvo/status.go"]
    # nor are RST literals that name no file (labels, states); one that names a file is read
    assert citations.paths_in(
        "internal/lm/resource.go: ``gpu.count``/``gpu.product``, ``gpu.slices.gi/ci``, ``pending``/``rebooting``, "
        "``internal/lm/mig-strategy.go``"
    ) == ["internal/lm/resource.go", "internal/lm/mig-strategy.go"]


def test_a_source_naming_another_repository_is_read_at_that_repository_and_commit():
    """kubesim/upstream.py's clusterpolicy cites the device plugin and mig-parted after the operator's files."""
    device_plugin, mig_parted = "1b826acc6af3079d8923bac395c3124b8861a9a6", "bd7160f43f16462eeb21e1eda5e67b5b6b03fd7d"
    by_key = {(c.repository, c.path): c.commit for c in CITED if c.where == "kubesim/upstream.py (clusterpolicy)"}
    assert by_key[("NVIDIA/gpu-operator", "controllers/clusterpolicy_controller.go")] == (
        "a22dbf671f2e26f9a1e342f8eea28e196235e110"
    )
    assert by_key[("NVIDIA/k8s-device-plugin", "internal/lm/mig-strategy.go")] == device_plugin
    assert by_key[("NVIDIA/mig-parted", "pkg/mig/reconfigure/reconfigure.go")] == mig_parted
    assert ("NVIDIA/gpu-operator", "internal/lm/mig-strategy.go") not in by_key


def test_citations_without_a_commit_are_only_those_known():
    """The waits' citations that name no commit cannot be checked at one; they are listed here so that a new one
    is seen (core.py and openshift.py cite kubernetes and OpenShift repositories without a commit)."""
    assert {os.path.basename(c.where) for c in UNCOMMITTED} <= {"core.py", "openshift.py"}
