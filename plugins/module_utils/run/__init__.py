# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A run on disk: artifact directories, the run context and lock, the results tree and its parse cache,
the host's environment, the collection's own location."""
