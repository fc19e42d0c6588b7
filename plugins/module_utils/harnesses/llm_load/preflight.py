# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the server said when it refused a request, and what the preflight does about it.

Servers word a refused request differently; ``server_message`` reads, from at most
``MAX_BODY`` bytes:

- FastAPI as ``transformers serve`` answers: ``{"detail": "Unexpected fields in the request: {'ignore_eos'}"}``
- FastAPI/pydantic validation: ``{"detail": [{"type": "extra_forbidden", "loc": ["body", "ignore_eos"], ...}]}``
- OpenAI and vLLM: ``{"error": {"message": ..., "param": ...}}``, older vLLM ``{"object": "error", "message": ...}``
- a string ``error`` (TGI), or plain text.

``rejected_fields`` names the request fields the answer says the server does not accept
(among those sent), and ``decide`` turns that into the preflight's decision: drop the
fields the harness added on its own (``ignore_eos`` with ``ignore_eos: auto``,
``stream_options``) and try again, or stop with one line naming the field and the
setting that asks for it.
"""

from __future__ import annotations

import json
import re

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import ConfigError

MAX_BODY = 16384            # bytes of an error answer that are read
MAX_MESSAGE = 300           # characters of the server's message kept (one line)
MAX_ITEMS = 50              # entries of a validation-error list that are read

IGNORE_EOS_MODES = ("auto", "true", "false")

# what a field is, for the decision (``field_origins``)
HARNESS = "harness"         # added by the harness on its own: dropped when refused
IGNORE_EOS = "ignore_eos"   # added for ignore_eos: auto (dropped) or true (the run stops)
EXTRA_BODY = "extra_body"   # the user's --extra-body: the run stops
REQUEST = "request"         # the request itself (model, prompt, max_tokens...): the run stops

REFUSAL_WORDS = re.compile(r"unexpected|unrecogni[sz]ed|unknown|extra (?:inputs?|fields?|arguments?)|not permitted|"
                           r"not allowed|unsupported|not supported|forbidden|invalid (?:field|argument|param)",
                           re.IGNORECASE)


class PreflightRefused(ValueError):
    """The preflight cannot go on (one line)."""


def ignore_eos_mode(value, where="ignore_eos"):
    """``auto``, ``true`` or ``false`` from a setting (booleans and their usual spellings accepted)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value).strip().lower() if isinstance(value, str) else None
    text = {"yes": "true", "on": "true", "1": "true", "no": "false", "off": "false", "0": "false"}.get(text, text)
    if text not in IGNORE_EOS_MODES:
        raise ConfigError("%s: expected auto, true or false, got %r" % (where, value))
    return text


def _one_line(text, limit=MAX_MESSAGE):
    return " ".join(str(text)[:limit * 4].split())[:limit]


def _decode(body):
    if isinstance(body, (bytes, bytearray)):
        return bytes(body[:MAX_BODY]).decode("utf-8", "replace")
    return str(body or "")[:MAX_BODY]


def _document(text):
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _validation_items(detail):
    """Pydantic's list of errors: ``(loc, msg, type)`` of each well-formed entry."""
    items = []
    for entry in detail[:MAX_ITEMS]:
        if not isinstance(entry, dict):
            continue
        loc = entry.get("loc")
        loc = [str(part) for part in loc[:8]] if isinstance(loc, (list, tuple)) else []
        items.append((loc, _one_line(entry.get("msg") or ""), str(entry.get("type") or "")[:100]))
    return items


def server_message(body):
    """The server's own words from an error answer (bytes or text), one line of at most MAX_MESSAGE characters;
    None when the body is empty."""
    text = _decode(body)
    document = _document(text)
    if isinstance(document, dict):
        detail = document.get("detail")
        if isinstance(detail, str):
            return _one_line(detail)
        if isinstance(detail, list):
            parts = ["%s: %s" % (".".join(loc) or "request", msg or kind)
                     for loc, msg, kind in _validation_items(detail)]
            if parts:
                return _one_line("; ".join(parts))
        error = document.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), (str, list)):
            message = error["message"]
            return _one_line(message if isinstance(message, str) else "; ".join(str(m) for m in message[:MAX_ITEMS]))
        if isinstance(error, str):
            return _one_line(error)
        if isinstance(document.get("message"), str):
            return _one_line(document["message"])
    return _one_line(text) or None


def rejected_fields(body, sent_fields):
    """The fields among ``sent_fields`` (top-level keys of the request) that the answer says are not accepted."""
    sent = set(sent_fields)
    found = set()
    text = _decode(body)
    document = _document(text)
    messages = []
    if isinstance(document, dict):
        detail = document.get("detail")
        if isinstance(detail, list):
            for loc, msg, kind in _validation_items(detail):
                if loc[:1] == ["body"] and len(loc) > 1 and loc[1] in sent and (
                        "extra" in kind or REFUSAL_WORDS.search(msg)):
                    found.add(loc[1])
        elif isinstance(detail, str):
            messages.append(detail)
        error = document.get("error")
        if isinstance(error, dict):
            param = error.get("param")
            if isinstance(param, str) and param.split(".", 1)[0] in sent:
                found.add(param.split(".", 1)[0])
            if isinstance(error.get("message"), str):
                messages.append(error["message"])
        elif isinstance(error, str):
            messages.append(error)
        if isinstance(document.get("message"), str):
            messages.append(document["message"])
    elif document is None:
        messages.append(text)
    for message in messages:
        message = message[:MAX_BODY]
        if REFUSAL_WORDS.search(message):
            found.update(field for field in sent if re.search(r"(?<![\w.])%s(?!\w)" % re.escape(field), message))
    return sorted(found)


def decide(status, body, field_origins, mode, where):
    """The preflight's answer to a refused request: the fields to drop before trying again.

    ``field_origins`` maps each top-level field sent to HARNESS, IGNORE_EOS, EXTRA_BODY or
    REQUEST; ``mode`` is the ignore_eos setting. Raises PreflightRefused (one line naming the
    field and the setting, or the server's words) when the run cannot go on as asked.
    """
    message = server_message(body)
    said = ": %s" % message if message else ""
    fields = rejected_fields(body, field_origins)
    if not fields:
        raise PreflightRefused("%s: HTTP %d: the server refused the preflight request%s" % (where, status, said))
    for field in fields:
        origin = field_origins[field]
        if origin == IGNORE_EOS and mode == "true":
            raise PreflightRefused("%s: HTTP %d: the server does not accept the field ignore_eos, which ignore_eos: "
                                   "true (--ignore-eos true) sends; use ignore_eos: auto (drop it when refused) or "
                                   "false%s" % (where, status, said))
        if origin == EXTRA_BODY:
            raise PreflightRefused("%s: HTTP %d: the server does not accept the field %s of extra_body (--extra-body)%s"
                                   % (where, status, field, said))
        if origin == REQUEST:
            raise PreflightRefused("%s: HTTP %d: the server refused the field %s of the request%s"
                                   % (where, status, field, said))
    return fields
