# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The configuration as a whole, above every domain: the list of every section and its model (``schema``,
each model owned by its domain) and the check of a whole configuration before any work starts
(``checks``: it plans the matrices and loads the workload, so it stands above the planners)."""
