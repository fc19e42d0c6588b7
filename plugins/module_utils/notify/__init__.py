# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Notifications of a run's verdict where teams look: a pull request's comment, a Slack thread.

``NOTIFIERS`` is the registry (a new one is a class with ``name``, ``extra_headers``, a constructor
taking the ``notifications`` section, its HTTP client, ``connect`` - a client of another base URL with
the same token - and ``cache`` - a mapping kept for the run -, and ``deliver(message)``). ``notify``
sends one message to every enabled notifier of the ``notifications`` section.

The promise is that notifying never fails the run: ``send`` is the boundary. A notifier that fails
for any reason (no token, 401, a rate limit longer than allowed, a dead endpoint, an answer of a
shape the notifier does not expect, even an unexpected exception) is one warning line, and its
message is spooled under ``<run root>/notify_spool/<notifier>.json`` for ``replay``
(``playbooks/notify.yml -e spool_dir=PATH``); what the other notifiers delivered is kept and
recorded in ``notifications.json``. The notifiers read answers defensively and raise
``NotifyError``; the broad catch in ``send`` is the last resort, and says which exception it was.
Tokens are read from the secrets directory when sending and never written; every text that leaves
here is masked with them.
"""

from __future__ import annotations

import datetime
import glob
import json
import os

from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import PerfscaleError
from ansible_collections.perfscale.topsail.plugins.module_utils.notify import answers, github, slack
from ansible_collections.perfscale.topsail.plugins.module_utils.json_http import JsonHttp, NotifyError
from ansible_collections.perfscale.topsail.plugins.module_utils.run import artifacts

NOTIFIERS = {"github": github.GitHubNotifier, "slack": slack.SlackNotifier}
SPOOL_DIRNAME = "notify_spool"
MAX_REASON = 500


def build(name, section, config, environ=None, sleep=None, cache=None):
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

    def connect(base_url):
        return JsonHttp(base_url, token, **options)

    return cls(section, connect(settings["api_url"]), connect=connect, cache=cache), token


def enabled(section):
    return [name for name in NOTIFIERS if section[name]["enabled"]]


def _spool(spool_dir, name, message, reason):
    artifacts.ensure_dir(spool_dir)
    path = os.path.join(spool_dir, "%s.json" % name)
    artifacts.write_json_atomic(path, {"notifier": name, "message": message, "reason": reason,
                                       "spooled_at": datetime.datetime.now(datetime.timezone.utc).isoformat()})
    return path


def _reason(exc, secrets):
    """One line for a notifier's failure, masked with the secrets."""
    if isinstance(exc, (PerfscaleError, OSError)):
        text = str(exc)
    else:
        text = "unexpected %s: %s" % (type(exc).__name__, exc)
    # masked before it is cut, so that no part of a secret is left at the cut
    return answers.one_line(secret_refs.mask_text(" ".join(text.split()), secrets), MAX_REASON)


def _failed(name, message, exc, token, spool_dir, outcome):
    """Record the failure of notifier ``name``: one warning line, the message spooled."""
    secrets = [token] if token else []
    reason = _reason(exc, secrets)
    try:
        outcome["spooled"].append(_spool(spool_dir, name, message, reason))
        what = "spooled: the verdict stands"
    except (PerfscaleError, OSError, ValueError, TypeError) as spool_exc:
        what = "not spooled: %s" % _reason(spool_exc, secrets)
    outcome["warnings"].append("notifications.%s: %s (%s)" % (name, reason, what))


def send(section, config, message, names, spool_dir, environ=None, sleep=None, cache=None):
    """Deliver ``message`` with each notifier of ``names``: ``{"delivered": [...], "warnings": [...],
    "spooled": [paths]}``. Nothing raises: each failure is one warning line and its message spooled;
    ``cache`` is kept for the run (who each token is)."""
    outcome = {"delivered": [], "warnings": [], "spooled": []}
    cache = {} if cache is None else cache
    for name in names:
        token = None
        try:
            notifier, token = build(name, section, config, environ, sleep, cache)
            outcome["delivered"].append(notifier.deliver(message))
        # the boundary whose documented promise is "notifying never fails the run": any failure, one line
        except Exception as exc:  # pylint: disable=broad-exception-caught
            _failed(name, message, exc, token, spool_dir, outcome)
    return outcome


def notify(section, config, message, run_root, environ=None, sleep=None):
    """Send the verdict to every enabled notifier; the record is also written to ``notifications.json``
    (a record that cannot be written is one more warning)."""
    names = enabled(section)
    outcome = send(section, config, message, names, os.path.join(run_root, SPOOL_DIRNAME), environ, sleep, {})
    if names:
        path = os.path.join(run_root, "notifications.json")
        try:
            artifacts.write_json_atomic(path, dict(outcome, message=message, notifiers=names))
        except (PerfscaleError, OSError) as exc:
            outcome["warnings"].append("notifications: the record %s was not written: %s"
                                       % (path, answers.one_line(exc)))
    return outcome


def replay(section, config, spool_dir, environ=None, sleep=None):
    """Deliver the spooled messages again; each delivered one leaves the spool."""
    outcome = {"delivered": [], "warnings": [], "spooled": []}
    cache = {}
    for path in sorted(glob.glob(os.path.join(spool_dir, "*.json"))):
        try:
            with open(path, encoding="utf-8") as handle:
                entry = json.load(handle)
            name, message = entry["notifier"], entry["message"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            outcome["warnings"].append("%s: not a spooled notification (%s)" % (path, answers.one_line(exc)))
            continue
        if not isinstance(name, str) or name not in NOTIFIERS:
            outcome["warnings"].append("%s: notifier %s is not one of %s" % (
                path, answers.one_line(repr(name), 80), ", ".join(NOTIFIERS)))
            continue
        try:
            os.remove(path)
        except OSError as exc:
            outcome["warnings"].append("%s: cannot be taken out of the spool, not sent again (%s)"
                                       % (path, exc.strerror or exc))
            continue
        done = send(section, config, message, [name], spool_dir, environ, sleep, cache)
        for key in outcome:
            outcome[key] += done[key]
    return outcome
