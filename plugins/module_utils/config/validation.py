# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How a configuration section is checked against its model, and the model of this package's own section.

Each domain owns the pydantic model of its section (``regression/section.py``, ``stores/section.py``...)
and builds it with the helpers here: ``strict()`` (unknown keys are errors), ``choice(names)`` (the
values a key may take, from the domain's registry), the upper bounds of timeouts. ``validate_section``
checks ``config[section]`` against a model: a misspelt or wrongly typed key is one ConfigError
naming the section and the key. This package is the floor: it never imports a domain. The list of
every section and its model is assembled above the domains (``config_sections/schema.py``), and a
whole configuration is checked there too (``config_sections/checks.py``).

pydantic is imported when a model is built, never at import time; a domain builds each model once
per process (``functools.cache`` on its factory): building a pydantic class costs about a
millisecond, and sections are read per run, per point and per KPI.
"""

from __future__ import annotations

import difflib
import functools

from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import ConfigError


# upper bounds: a value past them is a typo (or 1e300), refused by name before it overflows later
MAX_TIMEOUT_S = 7 * 24 * 3600
MAX_TOOL_TIMEOUT_S = 24 * 3600


def strict():
    """A model's configuration: unknown keys are errors."""
    import pydantic

    return pydantic.ConfigDict(extra="forbid")


def choice(names):
    """A Literal type of the registry's names (pydantic lists them in its error)."""
    from typing import Literal

    return Literal[tuple(names)]


@functools.cache
def secrets_model():
    import pydantic

    class Secrets(pydantic.BaseModel):
        model_config = strict()
        dir_env: str = pydantic.Field(default="PERFSCALE_SECRETS_DIR", min_length=1)

    return Secrets


def validate_section(config, section, model):
    """Validate ``config[section]`` with a pydantic model (extra keys forbidden).

    Returns the model instance. A misspelt or wrongly typed key is a
    ConfigError naming the section and the key.
    """
    import pydantic

    data = config_lib.get_dotted(config, section)
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        problems = []
        for error in exc.errors():
            location = ".".join(str(part) for part in error.get("loc", ()))
            key = "%s.%s" % (section, location) if location else section
            if error.get("type") == "extra_forbidden":
                parent = model
                for part in error.get("loc", ())[:-1]:
                    field = getattr(parent, "model_fields", {}).get(part)
                    parent = getattr(field, "annotation", None)
                known = sorted(getattr(parent, "model_fields", {}) or getattr(model, "model_fields", {}))
                hint = difflib.get_close_matches(str(error["loc"][-1]), known, n=1)
                suffix = " (did you mean '%s'?)" % hint[0] if hint else ""
                problems.append("unknown key '%s'%s" % (key, suffix))
            else:
                message = error.get("msg", "invalid value")
                if message.startswith("Value error, "):
                    message = message[len("Value error, "):]
                problems.append("'%s': %s" % (key, message))
        raise ConfigError("config section '%s' is invalid: %s" % (section, "; ".join(problems))) from None


def read_with_model(config, section, model):
    """``config[section]`` validated by ``model`` (a model class), as a plain dict (defaults filled in)."""
    return validate_section(config, section, model).model_dump()
