"""sutest and driver come from the inventory's groups, or else from KUBECONFIG."""

import os

from conftest import read
from helpers import REPO


def test_the_inventory_names_each_cluster_and_cluster_driver_picks_the_other(toolbox, sim, tmp_path):
    inventory = os.path.join(REPO, "inventories", "clusters", "hosts.yml")
    env = {"SUTEST_KUBECONFIG": sim.kubeconfig, "DRIVER_KUBECONFIG": str(tmp_path / "no-such-kubeconfig"),
           "KUBECONFIG": str(tmp_path / "not-this-one-either")}
    sutest = toolbox("cluster capture_environment", {}, tmp_path / "sutest", "-i", inventory, env=env)
    assert sutest.returncode == 0, sutest.output
    assert read(sutest.command_dir, "labels.json")["platform"] == "openshift"
    driver = toolbox("cluster capture_environment", {}, tmp_path / "driver", "-i", inventory, "-e", "cluster=driver",
                     env=env)
    assert driver.returncode != 0
    assert ("cluster driver: kubeconfig %s does not exist (perfscale_kubeconfig of the inventory host driver-cluster)"
            % (tmp_path / "no-such-kubeconfig")) in driver.flat


def test_without_the_groups_kubeconfig_applies(toolbox, tmp_path):
    run = toolbox("cluster capture_environment", {}, tmp_path)
    assert run.returncode == 0, run.output
    assert read(run.command_dir, "labels.json")["node_count"] == 4
