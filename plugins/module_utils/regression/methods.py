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
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import segments


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

    def analyse(self, series, options):
        """Change points and drift (``segments.Segmentation``); a method without a trend model finds
        change points only."""
        return segments.Segmentation(self.find(series, options))

    def defaults(self):
        return self.options_model()().model_dump()


def _strict_model(name, **fields):
    import pydantic

    return pydantic.create_model(name, __config__=pydantic.ConfigDict(extra="forbid"), **fields)


class LinearSegments(ChangePointMethod):
    name = "linear_segments"
    description = ("Straight-line segments (binary segmentation); a jump between them is a change when it stands "
                   "out of the long-run noise; a sloped last segment is a drift")

    @staticmethod
    @functools.cache
    def options_model():
        import pydantic

        return _strict_model(
            "LinearSegmentsOptions",
            # proposals: a split must lower the residual sum of squares by penalty x log(n) noise variances
            penalty=(float, pydantic.Field(default=8.0, gt=0)),
            # a jump between two segments: its two-sided p-value against the long-run noise
            max_pvalue=(float, pydantic.Field(default=0.01, gt=0, lt=1)),
            # a change made of the newest point alone (the verdict's question, with one point on its side)
            newest_max_pvalue=(float, pydantic.Field(default=0.003, gt=0, lt=1)),
            min_magnitude=(float, pydantic.Field(default=0.02, ge=0)),
            min_size=(int, pydantic.Field(default=5, ge=3)),
            # an earlier point this many noise deviations from its neighbours' median is an outlier (0: none)
            outlier_z=(float, pydantic.Field(default=4.0, ge=0)),
            drift_max_pvalue=(float, pydantic.Field(default=0.001, gt=0, lt=1)),
        )

    def minimum_history(self, options):
        # a segment of min_size points before the newest one
        return options["min_size"]

    def find(self, series, options):
        return segments.linear_segments(series, with_drift=False, **options).changes

    def analyse(self, series, options):
        return segments.linear_segments(series, **options)


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


METHODS = {method.name: method for method in (LinearSegments(), EDivisive(), ZScore(), RelativeWindows())}
DEFAULT_METHOD = LinearSegments.name


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


def analyse_series(values, method=DEFAULT_METHOD, drift=True, **options):
    """Change points and (``drift``) the drift of an ordered series. A value that is missing (None) or
    not finite is a gap: it is left out of the maths, and every index returned (change points, a
    drift's start) is the position in ``values`` as given, so that it names the right run."""
    import numpy as np

    series = np.array(values, dtype=float)    # a None becomes NaN
    present = np.flatnonzero(np.isfinite(series))
    settings = resolve_options(method, options)
    if present.size < 2:
        return segments.Segmentation([])
    chosen = get_method(method)
    given = series[present] if present.size < series.size else series
    found = chosen.analyse(given, settings) if drift else segments.Segmentation(chosen.find(given, settings))
    if present.size < series.size:
        for change in found.changes:
            change.index = int(present[change.index])
        if found.drift is not None:
            found.drift.start = int(present[found.drift.start])
    return found


def find_change_points(values, method=DEFAULT_METHOD, **options):
    """Change points of an ordered series; gaps (None, NaN) keep their place (``analyse_series``)."""
    return analyse_series(values, method, drift=False, **options).changes
