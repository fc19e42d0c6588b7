# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The configuration: documents, presets and overrides (``loading``), the schema of each section (``schema``),
the check of a whole configuration before work (``checks``), CI-comment arguments, secrets, dotted keys."""
