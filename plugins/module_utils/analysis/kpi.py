# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Key performance indicators: typed, labelled, with units and a direction.

A KPI is a function of a test's payload, declared with decorators::

    @HigherBetter
    @KPIMetadata(help="Median GFLOP/s of the operation", unit="GFLOP/s")
    @Format("{:.1f}")
    def rate(payload):
        return payload["results"]["rate"]

``KPIMetadata`` (help text and unit) is mandatory, and so is exactly one of
``HigherBetter``/``LowerBetter``; ``IgnoredForRegression``, ``Format``,
``FormatDivisor(divisor, unit=..., format=...)``, ``ViewOf("other_kpi")`` (this KPI
is another view of the measurement behind ``other_kpi``: it takes that KPI's
verdict and is not counted twice) and ``ErrorBar(function)`` (the spread of the
value, ± in the KPI's unit, drawn as error bars) and ``MayBeNull(reason)`` (a KPI
that does not apply to every test: its null value is not missing, even in strict
mode, and ``reason(payload)`` says why) are optional. The function's name is the
KPI's name. ``collect_kpis`` checks all of it and reports every
problem at once.

Labels come from a pydantic model per workload. In *strict* mode (continuous
testing) a missing label or KPI value fails with the list of what is missing;
in *lenient* mode (investigation) it is ``None`` with a warning.
"""

from __future__ import annotations

import math
import re

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import KPIError, MissingData

KPI_ATTRIBUTE = "__perfscale_kpi__"


class KPIDefinition:
    def __init__(self, function):
        self.function = function
        self.name = function.__name__
        self.help = None
        self.unit = None
        self.higher_is_better = None
        self.ignored_for_regression = False
        self.format = "{}"
        self.divisor = None
        self.display_unit = None
        self.view_of = None
        self.error_bar = None
        self.null_reason = None

    def describe(self):
        return {"help": self.help, "unit": self.unit, "higher_is_better": self.higher_is_better,
                "ignored_for_regression": self.ignored_for_regression, "view_of": self.view_of}

    def formatted(self, value):
        if value is None:
            return None
        shown = value / self.divisor if self.divisor else value
        try:
            text = self.format.format(shown)
        except (ValueError, TypeError):
            text = str(shown)
        unit = self.display_unit or self.unit
        return "%s %s" % (text, unit) if unit else text


def _definition(function):
    definition = getattr(function, KPI_ATTRIBUTE, None)
    if definition is None:
        definition = KPIDefinition(function)
        setattr(function, KPI_ATTRIBUTE, definition)
    return definition


def KPIMetadata(help, unit):  # noqa: N802 pylint: disable=invalid-name,redefined-builtin
    """Mandatory: what the KPI measures and its unit."""
    def decorate(function):
        definition = _definition(function)
        definition.help, definition.unit = help, unit
        return function
    return decorate


def _direction(function, higher):
    definition = _definition(function)
    if definition.higher_is_better is not None and definition.higher_is_better != higher:
        raise KPIError("KPI %s is declared both HigherBetter and LowerBetter" % definition.name)
    definition.higher_is_better = higher
    return function


def HigherBetter(function):  # noqa: N802 pylint: disable=invalid-name
    """A larger value is an improvement."""
    return _direction(function, True)


def LowerBetter(function):  # noqa: N802 pylint: disable=invalid-name
    """A smaller value is an improvement."""
    return _direction(function, False)


def IgnoredForRegression(function):  # noqa: N802 pylint: disable=invalid-name
    """Reported, but never analysed for regressions."""
    _definition(function).ignored_for_regression = True
    return function


def Format(fmt):  # noqa: N802 pylint: disable=invalid-name
    """How the value is displayed, e.g. ``"{:.2f}"``."""
    def decorate(function):
        _definition(function).format = fmt
        return function
    return decorate


def FormatDivisor(divisor, unit, format="{:.2f}"):  # noqa: N802 pylint: disable=invalid-name,redefined-builtin
    """Display value / divisor in another unit (the stored value keeps its unit)."""
    def decorate(function):
        if not divisor:
            raise KPIError("FormatDivisor of KPI %s: the divisor must be non-zero" % function.__name__)
        definition = _definition(function)
        definition.divisor, definition.display_unit, definition.format = divisor, unit, format
        return function
    return decorate


def ViewOf(primary):  # noqa: N802 pylint: disable=invalid-name
    """Another view of the measurement behind the KPI ``primary`` (time_median of rate):
    it takes that KPI's verdict and is not counted twice in the totals."""
    def decorate(function):
        _definition(function).view_of = primary
        return function
    return decorate


def ErrorBar(spread):  # noqa: N802 pylint: disable=invalid-name
    """``spread(payload)`` gives the ± spread of the value (same unit), drawn as error bars."""
    def decorate(function):
        _definition(function).error_bar = spread
        return function
    return decorate


def MayBeNull(reason):  # noqa: N802 pylint: disable=invalid-name
    """The KPI does not apply to every test (an efficiency against a GPU's peak on a CPU point, or
    on a GPU the peak table does not know): a null value is recorded with ``reason(payload)`` (one
    line) and is not missing data, even in strict mode."""
    def decorate(function):
        _definition(function).null_reason = reason
        return function
    return decorate


BETTER = {"higher": HigherBetter, "lower": LowerBetter}


def _results_value(key):
    def value(payload):
        return payload["results"][key]
    return value


def declare(name, help_text, unit, better, fmt=None, key=None, value=None, ignored=False, error_bar=None,
            view_of=None, divisor=None, display_unit=None, null_reason=None):
    """One KPI, declared in one call (what the decorators above declare; ``workloads/base.kpi``):

    ``name`` its name; ``help_text`` and ``unit`` its ``KPIMetadata``; ``better`` ``"higher"`` or
    ``"lower"``; ``fmt`` its ``Format`` (default ``"{}"``); its value ``payload["results"][key]``
    (``key`` defaults to the name) or ``value(payload)``; ``ignored``: ``IgnoredForRegression``;
    ``error_bar``: the ``ErrorBar``, a results key or a function of the payload; ``view_of``:
    ``ViewOf``; ``divisor`` and ``display_unit``: ``FormatDivisor`` (``fmt`` then formats the
    divided value, default ``"{:.2f}"``); ``null_reason``: ``MayBeNull`` (the KPI may be null for a
    test it does not apply to; a function of the payload saying why)."""
    if better not in BETTER:
        raise ValueError("KPI %s: better must be 'higher' or 'lower', not %r" % (name, better))
    compute = value or _results_value(key or name)

    def function(payload):
        return compute(payload)

    # a function of its own carries the KPI (its name, its definition), even when ``value`` is shared
    function.__name__ = function.__qualname__ = name
    function = KPIMetadata(help=help_text, unit=unit)(function)
    if divisor is not None:
        function = FormatDivisor(divisor, unit=display_unit, format=fmt or "{:.2f}")(function)
    elif fmt is not None:
        function = Format(fmt)(function)
    if error_bar is not None:
        function = ErrorBar(_results_value(error_bar) if isinstance(error_bar, str) else error_bar)(function)
    if view_of is not None:
        function = ViewOf(view_of)(function)
    if ignored:
        function = IgnoredForRegression(function)
    if null_reason is not None:
        function = MayBeNull(null_reason)(function)
    return BETTER[better](function)


def collect_kpis(functions):
    """KPI definitions of decorated functions; every declaration problem at once."""
    definitions, problems = [], []
    for function in functions:
        definition = getattr(function, KPI_ATTRIBUTE, None)
        if definition is None:
            continue
        if not definition.help or not definition.unit:
            problems.append("KPI %s lacks @KPIMetadata(help=..., unit=...)" % definition.name)
        if definition.higher_is_better is None:
            problems.append("KPI %s lacks @HigherBetter or @LowerBetter" % definition.name)
        definitions.append(definition)
    if problems:
        raise KPIError("; ".join(problems))
    names = [d.name for d in definitions]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise KPIError("KPI name(s) declared twice: %s" % ", ".join(duplicates))
    for definition in definitions:
        if definition.view_of is not None and definition.view_of not in names:
            problems.append("KPI %s is a view of %s, which is not a KPI" % (definition.name, definition.view_of))
        elif definition.view_of is not None and definition.view_of == definition.name:
            problems.append("KPI %s cannot be a view of itself" % definition.name)
    if problems:
        raise KPIError("; ".join(problems))
    return definitions


# --------------------------------------------------------------------------
# computing


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def compute_kpis(definitions, payload, strict=False):
    """KPI values of one payload: ``{name: {value, unit, help, ...}}`` and warnings."""
    values, warnings, missing = {}, [], []
    for definition in definitions:
        try:
            value = definition.function(payload)
        except (KeyError, TypeError, IndexError, AttributeError, ZeroDivisionError) as exc:
            value = None
            reason = "%s: %s" % (type(exc).__name__, exc)
        else:
            reason = "no value"
        if value is not None and not _is_number(value):
            reason, value = "not a finite number (%r)" % (value,), None
        null_reason = None
        if value is None and definition.null_reason is not None and reason == "no value":
            null_reason = _null_reason(definition, payload)
        elif value is None:
            missing.append("kpi %s" % definition.name)
            warnings.append("KPI %s: %s" % (definition.name, reason))
        values[definition.name] = dict(definition.describe(), value=value, formatted=definition.formatted(value),
                                       error=_error_bar(definition, payload) if value is not None else None)
        if definition.null_reason is not None:
            values[definition.name]["null_reason"] = null_reason
    if strict and missing:
        raise MissingData(missing)
    return values, warnings


def _null_reason(definition, payload):
    """Why a ``MayBeNull`` KPI is null: one line, or ``"not applicable"``."""
    try:
        reason = definition.null_reason(payload)
    except (KeyError, TypeError, IndexError, AttributeError):
        reason = None
    return " ".join(str(reason).split()) if reason else "not applicable"


def _error_bar(definition, payload):
    """The KPI's spread, or None (no error bar declared, or it cannot be computed)."""
    if definition.error_bar is None:
        return None
    try:
        spread = definition.error_bar(payload)
    except (KeyError, TypeError, IndexError, AttributeError, ZeroDivisionError):
        return None
    return float(spread) if _is_number(spread) else None


def validate_labels(model, raw_labels, strict=False):
    """Labels through the workload's pydantic model.

    Strict: unknown or missing labels fail with their list. Lenient: the raw
    labels are kept, with a warning per problem.
    """
    import pydantic

    try:
        return model.model_validate(raw_labels).model_dump(), []
    except pydantic.ValidationError as exc:
        problems = []
        for error in exc.errors():
            where = ".".join(str(p) for p in error.get("loc", ()))
            if error.get("type") == "missing" or error.get("input", "") is None:
                problems.append("label %s" % where)
            elif error.get("type") == "extra_forbidden":
                problems.append("unknown label %s" % where)
            else:
                problems.append("label %s (%s)" % (where, error.get("msg")))
        if strict:
            raise MissingData(problems) from None
        return dict(raw_labels), ["labels: %s" % p for p in problems]


def flat_records(labels, kpis, extra=None):
    """One record per KPI, labels flattened into it (what a store indexes); a ``MayBeNull`` KPI that
    does not apply to the test (null with its ``null_reason``) has no record."""
    records = []
    for name, kpi in kpis.items():
        if kpi["value"] is None and kpi.get("null_reason"):
            continue
        record = dict(labels)
        record.update(extra or {})
        record.update(kpi_name=name, value=kpi["value"], unit=kpi["unit"],
                      higher_is_better=kpi["higher_is_better"], ignored_for_regression=kpi["ignored_for_regression"],
                      view_of=kpi.get("view_of"), error=kpi.get("error"))
        records.append(record)
    return records


# --------------------------------------------------------------------------
# OpenMetrics

_METRIC_CHARS = re.compile(r"[^a-zA-Z0-9_]")
_UNIT_WORDS = (("/", "_per_"), ("%", "percent"), ("µ", "u"))


def unit_token(unit):
    """An OpenMetrics unit from a human unit: ``GFLOP/s`` -> ``gflop_per_s``."""
    text = (unit or "").strip().lower()
    for old, new in _UNIT_WORDS:
        text = text.replace(old, new)
    text = _METRIC_CHARS.sub("_", text)
    return re.sub(r"_+", "_", text).strip("_")


def metric_name(name, unit, prefix=""):
    """Family name: the KPI name, suffixed with its unit as OpenMetrics requires."""
    base = _METRIC_CHARS.sub("_", (prefix + "_" + name) if prefix else name)
    if base[0].isdigit():
        base = "_" + base
    token = unit_token(unit)
    if token and not base.endswith("_" + token):
        base = "%s_%s" % (base, token)
    return base


def _escape_label(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(text):
    return str(text).replace("\\", "\\\\").replace("\n", "\\n")


def _label_name(name):
    name = _METRIC_CHARS.sub("_", str(name))
    return "_" + name if name[:1].isdigit() else name


def _number(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    return repr(float(value)) if isinstance(value, float) else str(value)


def openmetrics(tests, prefix="perfscale"):
    """OpenMetrics text of several tests: ``[(labels, kpis), ...]``.

    One family per KPI (``# HELP``, ``# TYPE gauge``, ``# UNIT``), one sample per
    test with its labels; KPIs without a value are left out; ends with ``# EOF``.
    """
    families = {}
    for labels, kpis in tests:
        for name, kpi in kpis.items():
            family = families.setdefault(name, {"kpi": kpi, "samples": []})
            if kpi["value"] is not None:
                family["samples"].append((labels, kpi["value"]))
    lines = []
    for name, family in families.items():
        kpi = family["kpi"]
        metric = metric_name(name, kpi["unit"], prefix)
        lines.append("# HELP %s %s" % (metric, _escape_help(kpi["help"])))
        lines.append("# TYPE %s gauge" % metric)
        token = unit_token(kpi["unit"])
        if token:
            lines.append("# UNIT %s %s" % (metric, token))
        for labels, value in family["samples"]:
            rendered = ",".join('%s="%s"' % (_label_name(k), _escape_label(v))
                                for k, v in labels.items() if v is not None)
            lines.append("%s{%s} %s" % (metric, rendered, _number(value)) if rendered else "%s %s" % (metric, _number(value)))
    lines.append("# EOF")
    return "\n".join(lines) + "\n"
