# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An htpasswd file with one user's entry set (bcrypt, as ``htpasswd -B`` writes it).

Other users' lines are kept as they are; a user whose entry already matches the password keeps
it (so a second run changes nothing and does not roll the OAuth server out again).
"""

from __future__ import annotations

import re

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError

USERNAME = re.compile(r"^[^:\s/%]+$")


def _bcrypt():
    try:
        import bcrypt
    except ImportError:
        raise ConfigError("htpasswd: the Python package bcrypt is needed (pip install bcrypt; it is in requirements.txt)") from None
    return bcrypt


def set_user(htpasswd_text, username, password):
    """``(new text, changed)``: ``htpasswd_text`` with ``username``'s entry for ``password``."""
    if not isinstance(username, str) or not USERNAME.match(username):
        raise ConfigError("htpasswd: username %r: expected a name without ':', '/', '%%' or spaces" % (username,))
    if not isinstance(password, str) or not password:
        raise ConfigError("htpasswd: the password of %s is empty: expected a non-empty password" % username)
    bcrypt = _bcrypt()
    lines = [line for line in (htpasswd_text or "").splitlines() if line.strip()]
    kept, current = [], None
    for line in lines:
        user, _separator, digest = line.partition(":")
        if user == username:
            current = digest
        else:
            kept.append(line)
    if current and current.startswith(("$2a$", "$2b$", "$2y$")):
        try:
            if bcrypt.checkpw(password.encode("utf-8"), current.replace("$2y$", "$2b$", 1).encode("ascii")):
                return "\n".join(lines) + "\n", False
        except ValueError:
            pass   # a malformed entry is replaced
    digest = bcrypt.hashpw(password.encode("utf-8"), bcrypt.gensalt()).decode("ascii").replace("$2b$", "$2y$", 1)
    return "\n".join(kept + ["%s:%s" % (username, digest)]) + "\n", True
