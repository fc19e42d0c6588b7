# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OpenAI-compatible API: endpoint paths, request bodies, what a response chunk holds.

``ENDPOINTS`` maps ``--endpoint`` names to their implementation. A streamed
response is a series of server-sent events ``data: {json}`` ending with
``data: [DONE]``; the text of a chunk is ``choices[0].text`` (completions) or
``choices[0].delta.content`` (chat; ``reasoning_content`` counts too). The harness
asks for ``stream_options.include_usage`` so that the server reports the token
counts (``usage``) in a last chunk (left out when the server refuses the field:
``include_usage=False``).
"""

from __future__ import annotations

import json


def _compact(document):
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def base_path_join(base_path, suffix):
    """``/`` + ``v1/completions`` -> ``/v1/completions``; a base ending in ``/v1`` keeps it once."""
    base = (base_path or "").rstrip("/")
    if base.endswith("/v1") and suffix.startswith("v1/"):
        suffix = suffix[3:]
    return "%s/%s" % (base, suffix)


class CompletionsEndpoint:
    name = "completions"
    path_suffix = "v1/completions"

    @staticmethod
    def body(model, prompt, max_tokens, stream, extra, include_usage=True):
        document = {"model": model, "prompt": prompt, "max_tokens": max_tokens, "stream": stream}
        if stream and include_usage:
            document["stream_options"] = {"include_usage": True}
        if extra:
            document.update(extra)
        return _compact(document)

    @staticmethod
    def chunk_text(choice):
        return choice.get("text") or ""

    @staticmethod
    def message_text(choice):
        return choice.get("text") or ""


class ChatEndpoint:
    name = "chat"
    path_suffix = "v1/chat/completions"

    @staticmethod
    def body(model, prompt, max_tokens, stream, extra, include_usage=True):
        messages = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
        document = {"model": model, "messages": messages, "max_tokens": max_tokens, "stream": stream}
        if stream and include_usage:
            document["stream_options"] = {"include_usage": True}
        if extra:
            document.update(extra)
        return _compact(document)

    @staticmethod
    def chunk_text(choice):
        delta = choice.get("delta") or {}
        return (delta.get("content") or "") + (delta.get("reasoning_content") or delta.get("reasoning") or "")

    @staticmethod
    def message_text(choice):
        message = choice.get("message") or {}
        return (message.get("content") or "") + (message.get("reasoning_content") or message.get("reasoning") or "")


ENDPOINTS = {endpoint.name: endpoint for endpoint in (CompletionsEndpoint, ChatEndpoint)}
