# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Token-length distributions, seeded: ``128``, ``uniform:64,256``, ``normal:128,16``...

A specification is ``NAME:P1,P2[,MIN,MAX]`` or a bare integer (``fixed``). Samples
are integers, clamped to ``[MIN, MAX]`` (default ``[1, +inf)``). Every sampler draws
from the ``random.Random`` it is given, so a seed reproduces the lengths exactly.

=============  ==================  ==============================================
name           parameters          sample
=============  ==================  ==============================================
fixed          N                   N
uniform        LOW,HIGH            integer uniform in [LOW, HIGH]
normal         MEAN,STDDEV         round(gauss(MEAN, STDDEV))
lognormal      MEAN,STDDEV         round(lognormvariate(mu, sigma)) whose mean and
                                   standard deviation are MEAN and STDDEV
                                   (sigma² = ln(1 + STDDEV²/MEAN²), mu = ln MEAN - sigma²/2)
exponential    MEAN                round(expovariate(1 / MEAN))
=============  ==================  ==============================================
"""

from __future__ import annotations

import math


class DistributionError(ValueError):
    """A length specification that cannot be used (one line)."""


def _fixed(rng, value):
    return value


def _uniform(rng, low, high):
    return rng.randint(int(low), int(high))


def _normal(rng, mean, stddev):
    return rng.gauss(mean, stddev)


def _lognormal(rng, mean, stddev):
    sigma2 = math.log(1.0 + (stddev * stddev) / (mean * mean))
    return rng.lognormvariate(math.log(mean) - sigma2 / 2.0, math.sqrt(sigma2))


def _exponential(rng, mean):
    return rng.expovariate(1.0 / mean)


# name -> (sampler, number of parameters, schema name in the llm-d report, parameter names)
DISTRIBUTIONS = {
    "fixed": (_fixed, 1, "fixed", ("value",)),
    "uniform": (_uniform, 2, "uniform", ("low", "high")),
    "normal": (_normal, 2, "gaussian", ("mean", "stddev")),
    "lognormal": (_lognormal, 2, "other", ("mean", "stddev")),
    "exponential": (_exponential, 1, "other", ("mean",)),
}


class LengthDistribution:
    """A parsed specification; ``sample(rng)`` gives one integer length."""

    def __init__(self, name, params, minimum=1, maximum=None, text=None):
        self.name = name
        self.params = tuple(params)
        self.minimum = minimum
        self.maximum = maximum
        self.text = text or describe(name, params, minimum, maximum)
        self._sampler = DISTRIBUTIONS[name][0]

    def sample(self, rng):
        value = int(round(self._sampler(rng, *self.params)))
        if value < self.minimum:
            value = self.minimum
        if self.maximum is not None and value > self.maximum:
            value = self.maximum
        return value

    @property
    def mean(self):
        """Nominal mean (before clamping)."""
        if self.name == "uniform":
            return (self.params[0] + self.params[1]) / 2.0
        return float(self.params[0])

    def as_sequence_length(self):
        """The ``SequenceLength`` object of the llm-d benchmark report."""
        _sampler, _count, schema_name, _names = DISTRIBUTIONS[self.name]
        document = {"distribution": schema_name, "value": int(round(self.mean))}
        if self.name in ("normal", "lognormal"):
            document["std_dev"] = float(self.params[1])
        if self.name == "uniform":
            document["min"], document["max"] = int(self.params[0]), max(1, int(self.params[1]))
        else:
            document["min"] = int(self.minimum)
            if self.maximum is not None:
                document["max"] = max(1, int(self.maximum))
        return document

    def as_dict(self):
        return {"distribution": self.name, "params": list(self.params), "min": self.minimum, "max": self.maximum,
                "spec": self.text}


def describe(name, params, minimum=1, maximum=None):
    text = "%s:%s" % (name, ",".join("%g" % p for p in params))
    if minimum != 1 or maximum is not None:
        text += ",%g,%s" % (minimum, "" if maximum is None else "%g" % maximum)
    return text


def parse_length(spec, what="length"):
    """``128`` / ``fixed:128`` / ``uniform:64,256`` / ``normal:128,16[,MIN,MAX]`` ..."""
    if isinstance(spec, LengthDistribution):
        return spec
    if isinstance(spec, bool):
        raise DistributionError("%s: expected a token count or NAME:PARAMS, got %r" % (what, spec))
    if isinstance(spec, (int, float)):
        spec = str(int(spec)) if float(spec).is_integer() else str(spec)
    if not isinstance(spec, str) or not spec.strip():
        raise DistributionError("%s: expected a token count or NAME:PARAMS, got %r" % (what, spec))
    text = spec.strip()
    name, sep, rest = text.partition(":")
    if not sep:
        name, rest = "fixed", text
    name = name.strip().lower()
    if name not in DISTRIBUTIONS:
        raise DistributionError("%s: unknown distribution %r in %r; known: %s"
                                % (what, name, text, ", ".join(sorted(DISTRIBUTIONS))))
    count = DISTRIBUTIONS[name][1]
    try:
        numbers = [float(part) if part.strip() else None for part in rest.split(",")]
    except ValueError:
        raise DistributionError("%s: %r: parameters must be numbers (%s:%s[,MIN,MAX])"
                                % (what, text, name, ",".join(DISTRIBUTIONS[name][3]).upper())) from None
    if len(numbers) not in (count, count + 1, count + 2) or any(n is None for n in numbers[:count]):
        raise DistributionError("%s: %r: %s takes %d parameter(s) (%s) and optional MIN,MAX"
                                % (what, text, name, count, ",".join(DISTRIBUTIONS[name][3]).upper()))
    params = numbers[:count]
    minimum = numbers[count] if len(numbers) > count and numbers[count] is not None else 1
    maximum = numbers[count + 1] if len(numbers) > count + 1 else None
    if any(not math.isfinite(p) for p in params) or params[0] <= 0:
        raise DistributionError("%s: %r: the first parameter must be a positive number" % (what, text))
    if name in ("normal", "lognormal") and params[1] < 0:
        raise DistributionError("%s: %r: the standard deviation must be >= 0" % (what, text))
    if name == "lognormal" and params[1] == 0:
        name, params = "fixed", params[:1]
    if name == "uniform" and params[1] < params[0]:
        raise DistributionError("%s: %r: uniform needs LOW <= HIGH" % (what, text))
    if name == "fixed" and not float(params[0]).is_integer():
        raise DistributionError("%s: %r: a fixed length must be an integer" % (what, text))
    if minimum < 0 or (maximum is not None and maximum < max(1, minimum)):
        raise DistributionError("%s: %r: expected 0 <= MIN <= MAX" % (what, text))
    return LengthDistribution(name, params, int(minimum), None if maximum is None else int(maximum), text)
