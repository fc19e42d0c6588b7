"""Each point's resource usage (point.json ``resources``, measured by the executor) in its payload and as
KPIs of any workload, ignored for regression; a point without them is not missing data, strict or not."""

import json
import os
import sys

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import postprocess
from ansible_collections.perfscale.topsail.plugins.module_utils.run import results_tree
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "fixtures"))
import trees  # noqa: E402  pylint: disable=wrong-import-position

SHIPPED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "config", "config.yaml")
USAGE = {"cpu_user_s": 1.25, "cpu_system_s": 0.5, "voluntary_context_switches": 40,
         "involuntary_context_switches": 7, "max_rss_mib": 88.5}


def test_the_payload_records_the_usage_and_its_kpis_are_ignored_for_regression(tmp_path):
    root = str(tmp_path / "run")
    measured, unmeasured = trees.make_tree(root, points=2)
    path = os.path.join(measured, "point.json")
    with open(path, encoding="utf-8") as handle:
        point = json.load(handle)
    point["resources"] = dict(USAGE, note="not a number")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(point, handle)
    config = config_lib.resolve_config(SHIPPED, presets="cpu_smoke").config
    config["export"]["enabled"] = False
    config["regression"]["enabled"] = False
    config["postprocess"]["strict"] = True
    summary = postprocess.visualize(root, config, ["cpu_smoke"])
    with open(os.path.join(summary["plots_dir"], "kpis.json"), encoding="utf-8") as handle:
        payloads = {p["labels"]["test_path"].rsplit("/", 1)[-1]: p for p in json.load(handle)}
    with_usage = payloads[os.path.basename(measured)]["kpis"]
    assert with_usage["point_cpu_user_time"]["value"] == 1.25
    assert with_usage["point_max_rss"]["value"] == 88.5 and with_usage["point_max_rss"]["unit"] == "MiB"
    assert with_usage["point_involuntary_context_switches"]["value"] == 7
    assert all(with_usage[name]["ignored_for_regression"] for name in
               ("point_cpu_user_time", "point_cpu_system_time", "point_voluntary_context_switches",
                "point_involuntary_context_switches", "point_max_rss"))
    # the workload's own KPIs are still there; a point with no usage measured has none of these, strict mode or not
    assert with_usage["rate"]["value"] is not None
    assert not any(name.startswith("point_cpu") for name in payloads[os.path.basename(unmeasured)]["kpis"])
    assert results_tree.point_resources(measured) == USAGE
    assert results_tree.point_resources(str(tmp_path)) is None
    # the usage travels in the parse cache: a replot from a downloaded cache (prefer_cache) has it too
    with open(os.path.join(measured, results_tree.CACHE_FILE), encoding="utf-8") as handle:
        assert json.load(handle)["results"][results_tree.RESOURCES_KEY] == USAGE
