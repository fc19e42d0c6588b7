"""Decode Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``) into JSON objects.

kubectl's typed generators (``kubectl create configmap|secret|deployment|job|...``)
send protobuf. The envelope (apimachinery's protobuf serializer) is the magic
``k8s\\0`` followed by a ``runtime.Unknown`` whose ``typeMeta`` names the kind and
whose ``raw`` is the object. Fields are decoded with the table ``messages.json``
(``python -m kubesim.protobuf.generate``, from ``k8s.io/api`` and
``k8s.io/apimachinery``'s ``generated.proto``) for the built-in kinds kubesim
serves, with apimachinery's special types rendered as their JSON: ``Time`` and
``MicroTime`` as RFC 3339, ``Quantity`` as a string, ``IntOrString`` as an
integer or a string, ``RawExtension``/``FieldsV1`` as embedded JSON, ``bytes``
as base64; embedded structs are inlined. Go's protobuf encoder writes empty
strings of non-pointer fields: they are dropped (JSON's ``omitempty``); numbers
and booleans are kept as sent. A field the table does not know is an error,
never silently dropped.
"""

import base64
import datetime
import functools
import json
import os
import struct

MAGIC = b"k8s\x00"
TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "messages.json")
META = "k8s.io.apimachinery.pkg.apis.meta.v1."
SPECIAL = {META + "Time", META + "MicroTime", "k8s.io.apimachinery.pkg.api.resource.Quantity",
           "k8s.io.apimachinery.pkg.util.intstr.IntOrString", "k8s.io.apimachinery.pkg.runtime.RawExtension",
           META + "FieldsV1", META + "Duration"}


class ProtobufError(ValueError):
    """The body cannot be decoded (malformed, or a kind or field kubesim's table does not know)."""


@functools.lru_cache(maxsize=1)
def _table():
    with open(TABLE, encoding="utf-8") as handle:
        return json.load(handle)


def _varint(data, pos):
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(data):
    """``(number, wire type, value)`` of each field; value is an int or bytes."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ProtobufError("unsupported wire type %d" % wire)
        yield number, wire, value


def _signed(value):
    return value - (1 << 64) if value >= 1 << 63 else value


def _scalar(kind, wire, value):
    if kind == "string":
        return bytes(value).decode("utf-8")
    if kind == "bytes":
        return base64.b64encode(bytes(value)).decode("ascii")
    if kind == "bool":
        return bool(value)
    if kind in ("int32", "int64", "sint32", "sint64", "uint32", "uint64"):
        return _signed(value)
    if kind in ("double", "fixed64"):
        return struct.unpack("<d" if kind == "double" else "<Q", value)[0]
    if kind in ("float", "fixed32"):
        return struct.unpack("<f" if kind == "float" else "<I", value)[0]
    raise ProtobufError("unsupported scalar type %s" % kind)


def _special(name, data):
    values = {number: value for number, _, value in _fields(data)}
    if name in (META + "Time", META + "MicroTime"):
        seconds, nanos = _signed(values.get(1, 0)), values.get(2, 0)
        if not seconds and not nanos:
            return None
        moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
        if name.endswith("MicroTime"):
            return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%06dZ" % (nanos // 1000)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    if name.endswith("Quantity"):
        return bytes(values.get(1, b"")).decode("utf-8")
    if name.endswith("IntOrString"):
        return bytes(values.get(3, b"")).decode("utf-8") if values.get(1) == 1 else _signed(values.get(2, 0))
    if name.endswith("Duration"):
        seconds = _signed(values.get(1, 0)) / 1e9
        return "%dm%ds" % divmod(int(seconds), 60) if seconds >= 60 else "%gs" % seconds
    raw = bytes(values.get(1, b""))
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        raise ProtobufError("%s is not JSON" % name)


def _message(name, data):
    table = _table()["messages"]
    fields = table.get(name)
    if fields is None:
        raise ProtobufError("no protobuf description of %s" % name)
    obj = {}
    for number, wire, value in _fields(data):
        entry = fields.get(str(number))
        if entry is None:
            raise ProtobufError("field %d of %s is not known to kubesim" % (number, name))
        json_name, kind, label, inline = entry
        if label == "map":
            key, item = None, None
            for inner, inner_wire, inner_value in _fields(value):
                if inner == 1:
                    key = bytes(inner_value).decode("utf-8")
                elif inner == 2:
                    item = _value(kind, inner_wire, inner_value, table)
            obj.setdefault(json_name, {})[key] = item if item is not None else ("" if kind == "string" else item)
            continue
        if label == "repeated":
            if wire == 2 and kind in ("int32", "int64", "bool", "uint32", "uint64"):
                pos, items = 0, []
                while pos < len(value):
                    number_, pos = _varint(value, pos)
                    items.append(_scalar(kind, 0, number_))
                obj.setdefault(json_name, []).extend(items)
            else:
                obj.setdefault(json_name, []).append(_value(kind, wire, value, table))
            continue
        decoded = _value(kind, wire, value, table)
        if inline and isinstance(decoded, dict):
            obj.update(decoded)
        elif decoded is not None and decoded != "":  # Go writes empty non-pointer strings; JSON omits them
            obj[json_name] = decoded
    return obj


def _value(kind, wire, value, table):
    if kind in SPECIAL:
        return _special(kind, value)
    if kind in table:
        return _message(kind, value)
    return _scalar(kind, wire, value)


def decode(body):
    """The JSON object of a protobuf request body; raises :class:`ProtobufError`."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf magic number")
    type_meta, raw = {}, b""
    for number, _, value in _fields(body[len(MAGIC):]):
        if number == 1:
            type_meta = {n: bytes(v).decode("utf-8") for n, _, v in _fields(value)}
        elif number == 2:
            raw = bytes(value)
    api_version, kind = type_meta.get(1, ""), type_meta.get(2, "")
    name = _table()["kinds"].get("%s/%s" % (api_version, kind))
    if name is None:
        raise ProtobufError("kubesim cannot decode protobuf bodies of %s %s (send JSON)" % (api_version, kind))
    obj = _message(name, raw)
    obj["apiVersion"], obj["kind"] = api_version, kind
    return obj
