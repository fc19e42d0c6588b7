"""Request bodies as kube-apiserver bounds them: the size before a byte is read, the nesting before
a parser sees it.

Whoever can reach kubesim's port can send a body (authentication comes first, but a 401 must not
cost the server the body either). The limits, read from upstream:

- **Size.** ``MaxRequestBodyBytes`` is ``int64(3 * 1024 * 1024)`` by default
  (``staging/src/k8s.io/apiserver/pkg/server/config.go``, ``NewConfig``: "we allow 2x as the
  largest request body size to be accepted and decoded in a write request"). The handlers read at
  most the limit + 1 and answer ``413 RequestEntityTooLarge`` "Request entity too large: limit is
  3145728" (``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go``, ``limitedReadBody``;
  ``k8s.io/apimachinery/pkg/api/errors``, ``NewRequestEntityTooLargeError``). kubesim looks at
  ``Content-Length`` first: a larger body is refused without being read (the connection is then
  closed), a smaller one is read up to its length, never more.
- **Nesting.** Go's decoders stop at 10000 levels: ``maxNestingDepth = 10000`` in
  ``encoding/json/scanner.go`` (forked by ``sigs.k8s.io/json``) and ``max_flow_level`` /
  ``max_indents`` = 10000 in go-yaml's ``scannerc.go`` ("exceeded max depth of 10000"), answered
  ``400 BadRequest``. Python's parsers recurse (libyaml's composer on the C stack: a 30000-deep
  YAML list of 60 KB ends the process with a segmentation fault) and so do kubesim's validation,
  copies and JSON encoding (``RecursionError`` past ~500 levels). So kubesim counts the nesting
  first, without recursion - brackets outside JSON strings, libyaml's (or PyYAML's) event stream for
  YAML, which keeps its stack on the heap - and refuses more than ``MAX_DEPTH`` (256) levels with
  the same ``400 BadRequest``: a divergence from the real server, which accepts up to 10000.
- **Aliases.** The same event scan counts the nodes a YAML document expands to through its
  aliases: more than one per byte of the largest body is "yaml: document contains excessive
  aliasing" (go-yaml's ``decode.go`` words; its ratio rule is not copied), 400 as there.

Nothing here recurses; every refusal is an :class:`~kubesim.errors.ApiError` with the status a real
API server answers.
"""

import itertools
import re

from kubesim.errors import ApiError

# staging/src/k8s.io/apiserver/pkg/server/config.go: MaxRequestBodyBytes: int64(3 * 1024 * 1024)
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
# encoding/json scanner.go maxNestingDepth, go-yaml scannerc.go max_flow_level / max_indents
UPSTREAM_MAX_DEPTH = 10000
# kubesim's own: below what its recursive parsers, validation, deepcopy and json.dumps handle
MAX_DEPTH = 256
# nodes a YAML body may expand to through aliases (a body without aliases has fewer than one per byte)
MAX_YAML_NODES = MAX_REQUEST_BODY_BYTES

YAML_TYPES = ("application/yaml", "application/apply-patch+yaml")

# a string, or one left open up to the end: every match attempt succeeds, so the scan stays linear
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\(?:.|\Z)[^"\\]*)*(?:"|\Z)', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [0] * 256
for _byte in b"[{":
    _STEP[_byte] = 1
for _byte in b"]}":
    _STEP[_byte] = -1
del _byte


def too_large(limit=MAX_REQUEST_BODY_BYTES):
    return ApiError(413, "RequestEntityTooLarge", "Request entity too large: limit is %d" % limit)


def not_decodable(why):
    return ApiError.bad_request("the body of the request could not be decoded: %s" % why)


def content_length(headers):
    """The announced body length (0 without one); 400 for a value that is not a whole number (as Go's
    HTTP server refuses it), or for two different values."""
    values = headers.get_all("Content-Length") if hasattr(headers, "get_all") else [headers.get("Content-Length")]
    values = {value.strip() for value in values or () if value is not None}
    if not values:
        return 0
    if len(values) > 1:
        raise ApiError.bad_request("bad Content-Length: more than one value")
    value = values.pop()
    # net/http: strconv.ParseUint(value, 10, 63)
    if not value.isascii() or not value.isdigit() or len(value) > 19 or int(value) >= 2 ** 63:
        raise ApiError.bad_request("bad Content-Length %r: expected a whole number of bytes" % value[:40])
    return int(value)


def read_body(stream, length, limit=MAX_REQUEST_BODY_BYTES):
    """``length`` bytes of ``stream``; 413 without reading any when ``length`` is over ``limit``; a
    ``ConnectionError`` when the client sends less than it announced."""
    if length > limit:
        raise too_large(limit)
    if not length:
        return b""
    data = stream.read(length)
    if len(data) != length:
        raise ConnectionError("the client closed the connection after %d of %d bytes" % (len(data), length))
    return data


def json_depth(data, limit=MAX_DEPTH):
    """The deepest nesting of ``[``/``{`` outside JSON strings, counted without recursion (a string
    left open runs to the end: the body is not JSON anyway, the parser says so)."""
    brackets = _JSON_STRING.sub(b'""', bytes(data)).translate(None, _NOT_BRACKETS)
    return max(itertools.accumulate(_STEP[byte] for byte in brackets), default=0)


def _yaml_check(data, max_depth, max_nodes):
    """Walk libyaml's (else PyYAML's) event stream: no recursion, the parser's stack on the heap.
    ``expanded`` counts the nodes the document stands for once its aliases are replaced."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    frames, sizes, expanded = [], {}, 0  # frames: [nodes, anchor] of each open collection
    for event in yaml.parse(data, Loader=loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if len(frames) >= max_depth:
                raise not_decodable("exceeded max depth of %d" % max_depth)
            frames.append([1, event.anchor])
            expanded += 1
            continue
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            size, anchor = frames.pop()
        elif isinstance(event, yaml.ScalarEvent):
            size, anchor = 1, event.anchor
            expanded += 1
        elif isinstance(event, yaml.AliasEvent):
            if any(frame[1] == event.anchor for frame in frames):
                # go-yaml: "anchor '...' value contains itself"; kubesim would recurse forever on it
                raise not_decodable("yaml: anchor '%s' value contains itself" % event.anchor[:64])
            size, anchor = sizes.get(event.anchor, 1), None
            expanded += size
        else:
            continue
        if anchor is not None:
            sizes[anchor] = size
        if frames:
            frames[-1][0] += size
        if expanded > max_nodes:
            raise not_decodable("yaml: document contains excessive aliasing")


def check(data, content_type, max_depth=MAX_DEPTH, max_nodes=MAX_YAML_NODES):
    """Refuse, before any parser runs, a body nested deeper than ``max_depth`` (JSON, YAML) or a YAML
    body that expands past ``max_nodes`` nodes through aliases: ``400 BadRequest``. A YAML body
    libyaml cannot read is a 400 too (the parser would say the same)."""
    if content_type in YAML_TYPES:
        import yaml

        try:
            _yaml_check(data, max_depth, max_nodes)
        except yaml.YAMLError as exc:
            raise not_decodable(str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__) from None
        return
    if json_depth(data) > max_depth:
        raise not_decodable("exceeded max depth of %d" % max_depth)
