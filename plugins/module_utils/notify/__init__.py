# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Notifications of a run's verdict where teams look: a pull request's comment, a Slack thread.

``NOTIFIERS`` is the registry (a new one is a class with ``name``, ``extra_headers``, a constructor
taking the ``notifications`` section and its HTTP client, and ``deliver(message)``). ``notify`` sends one message to every enabled notifier
of the ``notifications`` section; a notifier that fails (no token, 401, a rate limit longer than
allowed, a dead endpoint) is a warning, and its message is spooled under
``<run root>/notify_spool/<notifier>.json`` for ``replay`` (``playbooks/notify.yml -e
spool_dir=PATH``). Tokens are read from the secrets directory when sending and never written;
every text that leaves here is masked with them.
"""

from __future__ import annotations

import datetime
import glob
import json
import os

from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError
from ansible_collections.perfscale.topsail.plugins.module_utils.notify import github, slack
from ansible_collections.perfscale.topsail.plugins.module_utils.json_http import JsonHttp, NotifyError
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts

NOTIFIERS = {"github": github.GitHubNotifier, "slack": slack.SlackNotifier}
SPOOL_DIRNAME = "notify_spool"


def build(name, section, config, environ=None, sleep=None):
    """The notifier ``name`` with its token read from the secrets directory: ``(notifier, token)``."""
    settings = section[name]
    token = secret_refs.read_referenced_secret(config, settings["token_file"], environ)
    if not token:
        raise NotifyError("notifications.%s.token_file: the secret file is empty" % name)
    cls = NOTIFIERS[name]
    options = {"timeout_s": section["timeout_s"], "max_retry_after_s": section["max_retry_after_s"],
               "extra_headers": cls.extra_headers}
    if sleep is not None:
        options["sleep"] = sleep
    return cls(section, JsonHttp(settings["api_url"], token, **options)), token


def enabled(section):
    return [name for name in NOTIFIERS if section[name]["enabled"]]


def _spool(spool_dir, name, message, reason):
    artifacts.ensure_dir(spool_dir)
    path = os.path.join(spool_dir, "%s.json" % name)
    artifacts.write_json_atomic(path, {"notifier": name, "message": message, "reason": reason,
                                       "spooled_at": datetime.datetime.now(datetime.timezone.utc).isoformat()})
    return path


def send(section, config, message, names, spool_dir, environ=None, sleep=None):
    """Deliver ``message`` with each notifier of ``names``: ``{"delivered": [...], "warnings": [...],
    "spooled": [paths]}``; nothing raises."""
    outcome = {"delivered": [], "warnings": [], "spooled": []}
    for name in names:
        token = None
        try:
            notifier, token = build(name, section, config, environ, sleep)
            outcome["delivered"].append(notifier.deliver(message))
        except (PerfscaleError, OSError) as exc:
            reason = secret_refs.mask_text(str(exc), [token] if token else [])
            outcome["warnings"].append("notifications.%s: %s (spooled: the verdict stands)" % (name, reason))
            outcome["spooled"].append(_spool(spool_dir, name, message, reason))
    return outcome


def notify(section, config, message, run_root, environ=None, sleep=None):
    """Send the verdict to every enabled notifier; the record is also written to ``notifications.json``."""
    names = enabled(section)
    outcome = send(section, config, message, names, os.path.join(run_root, SPOOL_DIRNAME), environ, sleep)
    if names:
        artifacts.write_json_atomic(os.path.join(run_root, "notifications.json"),
                                    dict(outcome, message=message, notifiers=names))
    return outcome


def replay(section, config, spool_dir, environ=None, sleep=None):
    """Deliver the spooled messages again; each delivered one leaves the spool."""
    outcome = {"delivered": [], "warnings": [], "spooled": []}
    for path in sorted(glob.glob(os.path.join(spool_dir, "*.json"))):
        try:
            with open(path, encoding="utf-8") as handle:
                entry = json.load(handle)
            name, message = entry["notifier"], entry["message"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            outcome["warnings"].append("%s: not a spooled notification (%s)" % (path, exc))
            continue
        if name not in NOTIFIERS:
            outcome["warnings"].append("%s: notifier %r is not one of %s" % (path, name, ", ".join(NOTIFIERS)))
            continue
        os.remove(path)
        done = send(section, config, message, [name], spool_dir, environ, sleep)
        for key in outcome:
            outcome[key] += done[key]
    return outcome
