# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model of ``notifications``: where a verdict is posted (``github``, ``slack``).
"""

from __future__ import annotations

import functools

from ansible_collections.perfscale.topsail.plugins.module_utils.config import validation


SECTION = "notifications"


@functools.cache
def notifications_model():
    from typing import Optional

    import pydantic

    def _http_url(value, key):
        if value is not None and not str(value).startswith(("http://", "https://")):
            raise ValueError("%s %r: expected http(s)://host[:port][/path]" % (key, value))

    def _token_url(value, key):
        """A URL a bearer token is sent to: https://, or a loopback host (a test stand-in)."""
        from ansible_collections.perfscale.topsail.plugins.module_utils.config import secrets as secret_refs

        problem = secret_refs.cleartext_problem(value, key, "bearer tokens")
        if problem:
            raise ValueError(problem)

    class GitHub(pydantic.BaseModel):
        """One comment per pull request and test, updated by later runs (module_utils/notify/github.py)."""
        model_config = validation.strict()
        enabled: bool = False
        # the public API; GitHub Enterprise: https://<host>/api/v3
        api_url: str = "https://api.github.com"
        # owner/name
        repo: Optional[str] = pydantic.Field(default=None, pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
        pr_number: Optional[int] = pydantic.Field(default=None, ge=1)
        # a file of the secrets directory holding the token
        token_file: Optional[str] = None

        @pydantic.model_validator(mode="after")
        def _complete_when_enabled(self):
            _http_url(self.api_url, "api_url")
            if self.enabled:
                missing = [name for name in ("repo", "pr_number", "token_file") if not getattr(self, name)]
                if missing:
                    raise ValueError("enabled: true needs %s" % ", ".join(missing))
                _token_url(self.api_url, "api_url")
            return self

    class Slack(pydantic.BaseModel):
        """One message per run, in a thread per pull request (module_utils/notify/slack.py)."""
        model_config = validation.strict()
        enabled: bool = False
        api_url: str = "https://slack.com/api"
        # a channel id (C0123...) or name
        channel: Optional[str] = None
        token_file: Optional[str] = None

        @pydantic.model_validator(mode="after")
        def _complete_when_enabled(self):
            _http_url(self.api_url, "api_url")
            if self.enabled:
                missing = [name for name in ("channel", "token_file") if not getattr(self, name)]
                if missing:
                    raise ValueError("enabled: true needs %s" % ", ".join(missing))
                _token_url(self.api_url, "api_url")
            return self

    class Notifications(pydantic.BaseModel):
        model_config = validation.strict()
        # the test's name in the messages and the comment's marker (None: the presets applied, joined by '+')
        test_name: Optional[str] = None
        # at most this many changed KPIs in a message (the largest first)
        top_changes: int = pydantic.Field(default=5, ge=0, le=50)
        timeout_s: float = pydantic.Field(default=20.0, gt=0, le=validation.MAX_TOOL_TIMEOUT_S)
        # a rate limit's Retry-After up to this many seconds is waited for once; longer: spooled
        max_retry_after_s: float = pydantic.Field(default=60.0, ge=0, le=3600)
        github: GitHub = GitHub()
        slack: Slack = Slack()

    return Notifications


# dotted section key -> model factory
# a test flow's matrix: tests.<flow>.benchmark, validated as tests.benchmark is


def read(config):
    """The validated ``notifications`` section as a plain dict (defaults filled in)."""
    return validation.read_with_model(config, SECTION, notifications_model())
