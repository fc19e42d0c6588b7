"""A replot: a tree post-processed before (a finished plots directory) - its KPIs are not exported again."""

import os

from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import postprocess


def test_only_an_earlier_finished_plots_directory_makes_a_replot(tmp_path):
    first, second = tmp_path / "002__plots", tmp_path / "003__plots"
    first.mkdir()
    second.mkdir()
    # the first post-processing was interrupted (no summary.json): the second is not a replot
    assert not postprocess.is_replot(str(second))
    (first / postprocess.SUMMARY).write_text("{}")
    assert postprocess.is_replot(str(second))
    # the earlier one is never a replot of a later one, nor of itself
    assert not postprocess.is_replot(str(first))
    # plots directories of another name do not count
    other = tmp_path / "004__other_plots"
    other.mkdir()
    (tmp_path / "001__custom").mkdir()
    assert not postprocess.is_replot(os.path.join(str(tmp_path), "004__other_plots"))
