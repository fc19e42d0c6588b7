"""The two scores of the Turing Change Point Detection Benchmark (TCPDBench), written down for our benchmarks.

van den Burg & Williams, "An Evaluation of Change Point Detection Algorithms" (arXiv:2003.06222), section
4, as TCPDBench's ``analysis/scripts/metrics.py`` computes them (its published scores are reproduced to the
last digit by these functions: ``real_corpus.py`` checks it on every run with the scores of "zero"). A
series is annotated by several people, each a list of 0-based change-point indexes (possibly empty):

- **F1 with a margin** (``f_measure``): every annotator's set and the prediction get index 0 added (the
  start of the series counts as a change point, so that a series without change points can be scored);
  precision is the share of the predicted points that match a point of the union of the annotations,
  recall the mean over annotators of the share of their points matched; a match is within ``margin``
  points, each predicted point matched at most once (``true_positives``).
- **Covering** (``covering``): the segmentation of each annotator (``partition_from_cps``) covered by
  the predicted one - each annotated segment weighted by its length and scored by its best Jaccard
  overlap with a predicted segment (``cover_single``) - averaged over the annotators.

The greedy matching of ``true_positives`` takes the true points in the order Python iterates the set
built from them, as TCPDBench does: when two true points compete for one prediction, that order decides
which one gets it, and the published numbers were computed that way.

Bad input (a change point that is not a whole number, is negative, or is past the end of the series; no
annotator) is a ``ValueError`` of one line; TCPDBench's code would silently score it differently (a
negative point turned the whole covering partition into one segment).
"""

import numbers

MARGIN = 5


def check_locations(values, what, n_obs=None):
    """``values`` as a list of non-negative ints (below ``n_obs`` when given), or one-line ValueError."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError("%s: %r is not a list of change points; expected a list of whole numbers" % (what, values))
    out = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError("%s: change point %r is not a whole number; expected 0-based indexes" % (what, value))
        value = int(value)
        if value < 0 or (n_obs is not None and value >= n_obs):
            upper = "" if n_obs is None else " to %d (a series of %d observations)" % (n_obs - 1, n_obs)
            raise ValueError("%s: change point %d is out of range; expected indexes from 0%s" % (what, value, upper))
        out.append(value)
    return out


def _annotations(annotations, n_obs=None):
    if not hasattr(annotations, "items") or not annotations:
        raise ValueError("annotations: %r; expected a mapping of at least one annotator to change points"
                         % (annotations,))
    return {uid: check_locations(points, "annotator %s" % uid, n_obs) for uid, points in annotations.items()}


def _observations(n_obs):
    if isinstance(n_obs, bool) or not isinstance(n_obs, numbers.Integral) or n_obs < 1:
        raise ValueError("n_obs: %r; expected the number of observations, a whole number of at least 1" % (n_obs,))
    return int(n_obs)


def true_positives(truth, found, margin=MARGIN):
    """The points of ``truth`` matched by a point of ``found`` within ``margin``, each point of ``found``
    used at most once, the closest (then the smallest) first; ``truth`` taken in its set order."""
    remaining = set(found)
    matched = set()
    # a set is iterated as it is (a copy of a grown set may iterate in another order)
    for tau in truth if isinstance(truth, (set, frozenset)) else set(truth):
        close = sorted((abs(tau - x), x) for x in remaining if abs(tau - x) <= margin)
        if close:
            matched.add(tau)
            remaining.remove(close[0][1])
    return matched


def f_measure(annotations, predictions, margin=MARGIN, alpha=0.5, return_pr=False):
    """F-measure (``alpha`` 0.5: F1) of ``predictions`` against ``annotations`` ({annotator: points})."""
    if isinstance(margin, bool) or not isinstance(margin, numbers.Real) or not margin >= 0:
        raise ValueError("margin: %r; expected a number of points, at least 0" % (margin,))
    # every annotator's set, 0 added; the union built from them in the same order (set order matters)
    per_annotator = []
    for points in _annotations(annotations).values():
        chosen = set(points)
        chosen.add(0)
        per_annotator.append(chosen)
    predicted = set(check_locations(predictions, "predictions"))
    predicted.add(0)
    union = set()
    for chosen in per_annotator:
        for tau in chosen:
            union.add(tau)
    precision = len(true_positives(union, predicted, margin)) / len(predicted)
    # 1 / K x the sum (not the sum / K): the same floating-point result as the published scores
    recall = 1 / len(per_annotator) * sum(len(true_positives(chosen, predicted, margin)) / len(chosen)
                                          for chosen in per_annotator)
    score = precision * recall / (alpha * recall + (1 - alpha) * precision)
    return (score, precision, recall) if return_pr else score


def overlap(first, second):
    """Jaccard index of two sets (0 when both are empty is not defined: one of them never is here)."""
    return len(first & second) / len(first | second)


def _segments(locations, n_obs):
    """The segments [start, stop) that [0, n_obs) is cut into at ``locations`` (a cut at 0 makes none)."""
    n_obs = _observations(n_obs)
    cuts = sorted(set(check_locations(locations, "change points", n_obs)) - {0})
    edges = [0] + cuts + [n_obs]
    return list(zip(edges, edges[1:]))


def partition_from_cps(locations, n_obs):
    """The segments of ``_segments`` as sets of points (TCPDBench's form; ``covering`` works on the bounds)."""
    return [set(range(start, stop)) for start, stop in _segments(locations, n_obs)]


def cover_single(truth, prediction):
    """Covering of the segmentation ``truth`` by ``prediction`` (both lists of sets of the same points):
    sum over the segments of ``truth`` of their length times their best overlap, over the points."""
    total = sum(map(len, truth))
    if total != sum(map(len, prediction)) or not total:
        raise ValueError("segmentations of %d and %d points; expected two segmentations of the same points"
                         % (total, sum(map(len, prediction))))
    return sum(len(segment) * max(overlap(segment, other) for other in prediction) for segment in truth) / total


def _cover_segments(truth, prediction, n_obs):
    """``cover_single`` of two segmentations given by their bounds: the same numbers (the sizes of the
    intersections and unions are the same whole numbers), without a set of every point (a series of 10^9
    points is scored in the time of its segments)."""
    covered = 0
    for start, stop in truth:
        best = 0.0
        for other_start, other_stop in prediction:
            common = min(stop, other_stop) - max(start, other_start)
            if common > 0:
                best = max(best, common / ((stop - start) + (other_stop - other_start) - common))
        covered += (stop - start) * best
    return covered / n_obs


def covering(annotations, predictions, n_obs):
    """Mean over the annotators of the covering of their segmentation by the predicted one."""
    n_obs = _observations(n_obs)
    predicted = _segments(check_locations(predictions, "predictions", n_obs), n_obs)
    scores = [_cover_segments(_segments(points, n_obs), predicted, n_obs)
              for points in _annotations(annotations, n_obs).values()]
    return sum(scores) / len(scores)
