# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The toolbox: commands from the configuration, their arguments, commands in parallel, test flows, AWX job templates."""
