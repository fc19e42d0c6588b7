# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A run's artifacts to S3-compatible storage and back: the S3 client (SigV4, multipart) and the upload/download of a run tree."""
