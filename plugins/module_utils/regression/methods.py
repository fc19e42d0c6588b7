# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The change-point methods, registered in one place.

A method is one class: its ``name`` (the ``regression.method`` value), a
one-line ``description``, ``options_model()`` (a pydantic model whose defaults
are the method's defaults; built once per process, ``functools.cache``: a verdict
is judged per KPI and building a pydantic class costs about 1 ms), ``minimum_history(options)`` (history points the
method needs before its own test applies; below that the verdict compares with
the history mean) and ``find(series, options)``. Adding a method is one class
here and one entry in ``METHODS``: the configuration schema, the docs test and
the benchmarks read this registry.

Defaults were chosen by ``benchmarks/tune_regression.py`` on a tuning corpus
(another seed than the evaluation corpus of ``benchmarks/regression_quality.py``).
"""

from __future__ import annotations

import functools

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import RegressionError
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import maths


class ChangePointMethod:
    name = None
    description = ""

    @staticmethod
    def options_model():
        raise NotImplementedError

    def minimum_history(self, options):
        raise NotImplementedError

    def find(self, series, options):
        raise NotImplementedError

    def defaults(self):
        return self.options_model()().model_dump()


def _strict_model(name, **fields):
    import pydantic

    return pydantic.create_model(name, __config__=pydantic.ConfigDict(extra="forbid"), **fields)


class EDivisive(ChangePointMethod):
    name = "edivisive"
    description = "E-divisive change points (recursive split, merge pass) accepted by Student's t-test"

    @staticmethod
    @functools.cache
    def options_model():
        import pydantic

        return _strict_model(
            "EDivisiveOptions",
            window=(int, pydantic.Field(default=10, gt=1)),
            max_pvalue=(float, pydantic.Field(default=0.0001, gt=0, lt=1)),
            # a change made of the newest point alone (the verdict's question, with one point on its side)
            newest_max_pvalue=(float, pydantic.Field(default=0.001, gt=0, lt=1)),
            min_magnitude=(float, pydantic.Field(default=0.02, ge=0)),
            min_size=(int, pydantic.Field(default=3, ge=1)),
        )

    def minimum_history(self, options):
        return max(2 * options["min_size"], 4)

    def find(self, series, options):
        return maths.edivisive(series, **options)


class ZScore(ChangePointMethod):
    name = "zscore"
    description = "Each point against the points since the last change; confirmed by the following points"

    @staticmethod
    @functools.cache
    def options_model():
        import pydantic

        return _strict_model(
            "ZScoreOptions",
            threshold=(float, pydantic.Field(default=3.0, gt=0)),
            min_history=(int, pydantic.Field(default=12, ge=2)),
            min_magnitude=(float, pydantic.Field(default=0.02, ge=0)),
            confirm=(int, pydantic.Field(default=3, ge=0)),
        )

    def minimum_history(self, options):
        return options["min_history"]

    def find(self, series, options):
        return maths.zscore(series, **options)


class RelativeWindows(ChangePointMethod):
    name = "relative"
    description = "Mean of the next window against the mean before it, above a relative threshold"

    @staticmethod
    @functools.cache
    def options_model():
        import pydantic

        return _strict_model(
            "RelativeOptions",
            threshold=(float, pydantic.Field(default=0.08, gt=0)),
            window=(int, pydantic.Field(default=10, ge=1)),
            min_previous=(int, pydantic.Field(default=10, ge=1)),
        )

    def minimum_history(self, options):
        return options["min_previous"]

    def find(self, series, options):
        return maths.relative_windows(series, **options)


METHODS = {method.name: method for method in (EDivisive(), ZScore(), RelativeWindows())}


def method_names():
    return sorted(METHODS)


def get_method(name):
    try:
        return METHODS[name]
    except KeyError:
        raise RegressionError("regression method %r: expected one of %s" % (name, ", ".join(method_names()))) from None


def resolve_options(name, options=None):
    """The method's defaults updated with ``options``, validated; errors name the option."""
    import pydantic

    method = get_method(name)
    if not options:
        return method.defaults()
    model = method.options_model()
    unknown = sorted(set(options or {}) - set(model.model_fields))
    if unknown:
        raise RegressionError("regression method %s has no option %s; its options: %s"
                              % (name, ", ".join(unknown), ", ".join(sorted(model.model_fields))))
    try:
        return model.model_validate(dict(options or {})).model_dump()
    except pydantic.ValidationError as exc:
        problems = ["%s: %s" % (".".join(str(p) for p in error["loc"]), error["msg"]) for error in exc.errors()]
        raise RegressionError("regression method %s: invalid option(s): %s" % (name, "; ".join(problems))) from None


def find_change_points(values, method="edivisive", **options):
    """Change points of an ordered series (None and NaN values are dropped first)."""
    import numpy as np

    series = np.asarray(values, dtype=float)   # a None becomes NaN
    missing = np.isnan(series)
    if missing.any():
        series = series[~missing]
    settings = resolve_options(method, options)
    if series.size < 2:
        return []
    return get_method(method).find(series, settings)
