# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark matrix: expansion and the runner (``engine``), planning from the configuration (``benchmark``),
the Tekton pipeline rendering; where points run is ``executors`` (the inventory hosts too: ``executors/inventory_hosts``)."""
