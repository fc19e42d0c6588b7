# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Request data: synthetic prompts of target lengths, a JSONL prompt file, shared prefixes.

Token counting: with ``--tokenizer PATH`` (a ``tokenizer.json`` file, or a directory
holding one, read with the ``tokenizers`` package; else a directory loaded with
``transformers.AutoTokenizer`` offline) the counts are exact for that tokenizer.
Without it, the *word estimate* counts one token per word and one per punctuation
mark (regular expression ``\\w+|[^\\w\\s]``). The synthetic vocabulary is made of
short common English words that are a single token (with their leading space) in
the GPT-2, Llama and Qwen vocabularies, so the estimate is exact for synthetic
prompts on those models up to the special tokens a server adds (a chat template
adds a few); for other text it is an approximation (English prose usually has
10-30 % more tokens than words).

A synthetic prompt is ``[group prefix] + unique marker + filler``: the marker
(``Request <stage>-<index>:``) comes first so that no two requests share a prefix
(no accidental prefix-cache hits); with ``--prefix-tokens`` / ``--prefix-groups``
request i starts with the prefix of group i mod groups, *before* its marker, so
requests of a group share exactly that prefix. Nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import random
import re

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import ConfigError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.distributions import LengthDistribution

WORDS = (
    "the of and to in is it that for on with as at by this be from or have an not are but was all can "
    "one so if we do out up my new more time they will what about there when your me like just than "
    "some make now them these other see people way over first well get only also how year back after "
    "use two work our good any because day most us give even want go know take find here thing many "
    "right look help each small large long great little old big high different place last own same "
    "next early young important few public bad able open need move line turn end still keep hand "
    "point home water room mother area money story fact month lot study book eye job word business "
    "issue side kind head house service friend power hour game often night live car city play run "
    "state order light air number part system program question government company group problem "
    "case week world life school family student country hold bring begin seem start show hear "
    "call try ask leave put mean let feel become"
).split()

WORD_ESTIMATE_PATTERN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
POOL_WORDS = 1 << 16


class WordEstimate:
    """Counts one token per word and one per punctuation mark."""

    name = "word-estimate"
    exact = False

    def __init__(self, fallback_reason=None):
        self.fallback_reason = fallback_reason    # why a requested tokenizer is not used

    @staticmethod
    def count(text):
        return len(WORD_ESTIMATE_PATTERN.findall(text))

    def describe(self):
        document = {"kind": self.name, "exact": False, "rule": r"one token per \w+ run and per punctuation mark"}
        if self.fallback_reason:
            document["instead_of_tokenizer"] = self.fallback_reason
        return document


class TokenizersTokenizer:
    """A ``tokenizer.json`` read with the ``tokenizers`` package (imported only here)."""

    name = "tokenizers"
    exact = True

    def __init__(self, path):
        from tokenizers import Tokenizer  # pylint: disable=import-outside-toplevel

        self.path = path
        self._tokenizer = Tokenizer.from_file(path)

    def count(self, text):
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def describe(self):
        return {"kind": self.name, "exact": True, "path": self.path}


class TransformersTokenizer:
    """A local tokenizer directory loaded with ``transformers`` (offline, imported only here)."""

    name = "transformers"
    exact = True

    def __init__(self, path):
        from transformers import AutoTokenizer  # pylint: disable=import-outside-toplevel

        self.path = path
        self._tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)

    def count(self, text):
        return len(self._tokenizer.encode(text, add_special_tokens=False))

    def describe(self):
        return {"kind": self.name, "exact": True, "path": self.path}


def load_tokenizer(path):
    """The counter for ``--tokenizer PATH``; the word estimate when ``path`` is empty, or when
    neither ``tokenizers`` nor ``transformers`` is importable (it says why in ``fallback_reason``).
    A missing path, or a file the libraries cannot read, is a ConfigError."""
    if not path:
        return WordEstimate()
    if not os.path.exists(path):
        raise ConfigError("tokenizer %s does not exist (a tokenizer.json file or a tokenizer directory)" % path)
    candidate = path if os.path.isfile(path) else os.path.join(path, "tokenizer.json")
    problems, missing_libraries = [], 0
    loaders = ((TokenizersTokenizer, candidate), (TransformersTokenizer, path))
    for loader, argument in loaders:
        if loader is TokenizersTokenizer and not os.path.isfile(argument):
            problems.append("no tokenizer.json")
            continue
        try:
            return loader(argument)
        except ImportError as exc:
            missing_libraries += 1
            problems.append("%s not importable (%s)" % (loader.name, exc))
        except (OSError, ValueError, RuntimeError, TypeError) as exc:   # a broken file, in the library's words
            problems.append("%s could not load it (%s)" % (loader.name, " ".join(str(exc).split())[:160]))
    if missing_libraries and missing_libraries == len([p for p in problems if p != "no tokenizer.json"]):
        return WordEstimate("tokenizer %s not used: %s" % (path, "; ".join(problems)))
    raise ConfigError("tokenizer %s: %s; without --tokenizer the word estimate is used" % (path, "; ".join(problems)))


class Request:
    """The data of one request: its prompt (text, or chat messages) and lengths."""

    __slots__ = ("prompt", "input_tokens", "max_tokens")

    def __init__(self, prompt, input_tokens, max_tokens):
        self.prompt = prompt
        self.input_tokens = input_tokens
        self.max_tokens = max_tokens


def _index_seed(seed, stage_index, index, what):
    return "%s:%s:%s:%s" % (seed, stage_index, index, what)


class SyntheticPrompts:
    """Synthetic prompts with target input lengths (see the module docstring)."""

    source = "random"

    def __init__(self, input_tokens, output_tokens, counter, seed=0, prefix_tokens=0, prefix_groups=0):
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.counter = counter
        self.seed = seed
        generator = random.Random("%s:pool" % seed)
        self.pool = generator.choices(WORDS, k=POOL_WORDS)
        # the pool as one string and where each word starts: a filler is one slice
        self.pool_text = " ".join(self.pool) + " "
        self.word_starts = [0]
        for word in self.pool:
            self.word_starts.append(self.word_starts[-1] + len(word) + 1)
        self.prefix_tokens = prefix_tokens or 0
        self.prefix_groups = prefix_groups or 0
        self._fillers = {}
        self.prefixes = []
        if self.prefix_tokens and self.prefix_groups:
            for group in range(self.prefix_groups):
                marker = "Group %d." % group
                filler = self._filler(max(1, self.prefix_tokens - counter.count(marker)), offset=1 + 7919 * group)
                self.prefixes.append("%s %s" % (marker, filler))

    def _filler(self, count, offset=0):
        """``count`` tokens of words from the pool (exact for the word estimate; adjusted with a tokenizer)."""
        if count <= 0:
            return ""
        key = (count, offset)
        if key in self._fillers:
            return self._fillers[key]
        pool = self.pool
        if count <= len(pool):
            start = offset % (len(pool) - count + 1)
            text = self.pool_text[self.word_starts[start]:self.word_starts[start + count] - 1]
        else:
            start = 0
            text = " ".join(pool[i % len(pool)] for i in range(count))
        if self.counter.exact:
            words = text.split(" ")
            # words are (nearly always) one token each: trim or extend until the count matches
            for _attempt in range(8):
                actual = self.counter.count(" " + text)
                if actual == count:
                    break
                if actual > count:
                    words = words[:max(1, len(words) - (actual - count))]
                else:
                    words.extend(pool[(start + len(words) + i) % len(pool)] for i in range(count - actual))
                text = " ".join(words)
            if len(self._fillers) < 4096:
                self._fillers[key] = text
        return text

    def request(self, stage_index, index, input_tokens=None, output_tokens=None):
        target_in = input_tokens or self._length(self.input_tokens, stage_index, index, "input")
        target_out = output_tokens or self._length(self.output_tokens, stage_index, index, "output")
        marker = "Request %d-%d:" % (stage_index, index)
        marker_tokens = self.counter.count(marker)
        parts, total = [], 0
        if self.prefixes:
            parts.append(self.prefixes[index % len(self.prefixes)])
            total += self.prefix_tokens
        parts.append(marker)
        total += marker_tokens
        filler_count = max(0, target_in - marker_tokens)
        # the word estimate: vary the filler per request (cheap slices of the pool);
        # an exact tokenizer: one adjusted filler per length (cached), the marker keeps prompts unique
        offset = 0 if self.counter.exact else (index * 2654435761 + stage_index * 40503) % POOL_WORDS
        filler = self._filler(filler_count, offset)
        if filler:
            parts.append(filler)
            total += filler_count
        return Request(" ".join(parts), total, target_out)

    def _length(self, distribution, stage_index, index, what):
        if distribution.name == "fixed":
            return int(distribution.params[0])
        return distribution.sample(random.Random(_index_seed(self.seed, stage_index, index, what)))

    def describe(self):
        document = {"kind": "synthetic", "input_tokens": self.input_tokens.as_dict(),
                    "output_tokens": self.output_tokens.as_dict(), "tokenizer": self.counter.describe()}
        if self.prefixes:
            document["shared_prefix"] = {"prefix_tokens": self.prefix_tokens, "groups": self.prefix_groups}
        return document


class FilePrompts:
    """Prompts from a JSONL file, cycled in file order: ``{"prompt": str}`` or ``{"messages": [...]}``,
    optional ``output_tokens`` (else the ``--output-tokens`` distribution)."""

    source = "sampled"

    def __init__(self, path, output_tokens, counter, seed=0):
        self.path = path
        self.output_tokens = output_tokens
        self.counter = counter
        self.seed = seed
        self.prefix_tokens = 0
        self.prefix_groups = 0
        self.entries = read_prompt_file(path, counter)

    def request(self, stage_index, index, input_tokens=None, output_tokens=None):
        prompt, counted, wanted = self.entries[index % len(self.entries)]
        if output_tokens is None:
            output_tokens = wanted
        if output_tokens is None:
            if self.output_tokens.name == "fixed":
                output_tokens = int(self.output_tokens.params[0])
            else:
                output_tokens = self.output_tokens.sample(random.Random(_index_seed(self.seed, stage_index, index, "output")))
        return Request(prompt, counted, output_tokens)

    @property
    def input_tokens(self):
        """A fixed distribution at the file's mean prompt length (for the report)."""
        mean = sum(counted for _p, counted, _w in self.entries) / float(len(self.entries))
        return LengthDistribution("fixed", [max(1, int(round(mean)))], text="file mean")

    def describe(self):
        return {"kind": "file", "path": self.path, "entries": len(self.entries),
                "output_tokens": self.output_tokens.as_dict(), "tokenizer": self.counter.describe()}


def _message_text(messages):
    return "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))


def read_prompt_file(path, counter):
    """``[(prompt, input tokens, output tokens or None)]`` of a JSONL prompt file."""
    entries = []
    try:
        handle = open(path, encoding="utf-8")
    except OSError as exc:
        raise ConfigError("prompt file %s: %s" % (path, exc.strerror or exc)) from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise ConfigError("prompt file %s line %d: not JSON (%s)" % (path, number, exc)) from None
            if isinstance(item, str):
                item = {"prompt": item}
            if not isinstance(item, dict):
                raise ConfigError("prompt file %s line %d: expected an object with prompt or messages" % (path, number))
            if isinstance(item.get("messages"), list) and item["messages"]:
                prompt = item["messages"]
                text = _message_text(prompt)
            elif isinstance(item.get("prompt"), str) and item["prompt"]:
                prompt = text = item["prompt"]
            else:
                raise ConfigError("prompt file %s line %d: expected a non-empty prompt (string) or messages (list)" % (path, number))
            wanted = item.get("output_tokens", item.get("max_tokens"))
            if wanted is not None and (isinstance(wanted, bool) or not isinstance(wanted, int) or wanted < 1):
                raise ConfigError("prompt file %s line %d: output_tokens must be a positive integer, got %r" % (path, number, wanted))
            counted = item.get("input_tokens")
            if not isinstance(counted, int) or isinstance(counted, bool) or counted < 1:
                counted = counter.count(text)
            entries.append((prompt, counted, wanted))
    if not entries:
        raise ConfigError("prompt file %s: no prompts" % path)
    return entries
