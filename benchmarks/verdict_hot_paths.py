"""The hot paths of a run's verdicts, with the per-process model cache and without it.

Side by side in one run, ROUNDS interleaved rounds, medians:
  find_change_points  one call on a series of 60 points (edivisive, defaults), per call
  resolve_options     the method's options validated (what every verdict did), per call
  read_section        config section `regression` read and validated, per call
  analyse             regression.verdicts.analyse of a run of ENTRIES entries x 2 KPIs against a
                      SQLite store holding HISTORY earlier runs of each (the regression step)
"cached" is the code as it is (each pydantic model built once per process); "built per call" is
the same code with the factories' caches bypassed (functools.cache's __wrapped__), which is what
every call paid before: a pydantic model class built per verdict.
"""

import contextlib
import os
import sys
import tempfile
import time

import numpy as np

import _common
from ansible_collections.perfscale.topsail.plugins.module_utils import stores
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils.regression import methods, verdicts
from ansible_collections.perfscale.topsail.plugins.module_utils.stores import base

ROUNDS = int(os.environ.get("ROUNDS", "5"))
ENTRIES = int(os.environ.get("ENTRIES", "300"))
HISTORY = int(os.environ.get("HISTORY", "40"))
CALLS = int(os.environ.get("CALLS", "2000"))
KPIS = ("rate", "time_median")


@contextlib.contextmanager
def built_per_call():
    """The model factories without their cache, for the duration."""
    patched = [(cls, "options_model", staticmethod(cls.options_model.__wrapped__))
               for cls in (type(m) for m in methods.METHODS.values())]
    # each section's factory, in the module of the domain that owns it (what read_section calls)
    owners = {factory: sys.modules[factory.__module__] for factory in config_schema.SECTIONS.values()}
    patched += [(owner, factory.__name__, factory.__wrapped__) for factory, owner in owners.items()
                if hasattr(factory, "__wrapped__")]
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _new in patched]

    def relink():
        config_schema.SECTIONS.update({k: getattr(sys.modules[v.__module__], v.__name__)
                                       for k, v in config_schema.SECTIONS.items()})

    for owner, name, new in patched:
        setattr(owner, name, new)
    relink()
    try:
        yield
    finally:
        for owner, name, old in saved:
            setattr(owner, name, old)
        relink()


def per_call(function, calls):
    started = time.perf_counter()
    for _call in range(calls):
        function()
    return (time.perf_counter() - started) / calls


def fill(store):
    documents = []
    for run in range(HISTORY):
        for entry in range(ENTRIES):
            for kpi in KPIS:
                record = {"indicator": "matmul", "size": entry, "kpi_name": kpi, "value": 100.0 + (run * 7919 + entry) % 13,
                          "unit": "x", "higher_is_better": True, "ignored_for_regression": False,
                          "test_uuid": "u-%d-%d" % (run, entry), "workload": "w", "run_id": "r%d" % run,
                          "@timestamp": 1_700_000_000 + run * 3600}
                documents.append(base.kpi_document(record))
    store.write(documents)


def payloads():
    return [{"metadata": {"test_path": "current/%d" % entry, "test_uuid": "current-%d" % entry,
                          "timestamp": "2030-01-01T00:00:00+00:00", "exit_code": 0},
             "labels": {"indicator": "matmul", "size": entry},
             "kpis": {kpi: {"value": 100.0, "unit": "x", "help": "", "higher_is_better": True,
                            "ignored_for_regression": False} for kpi in KPIS}} for entry in range(ENTRIES)]


def main():
    series = list(100 * (1 + np.random.default_rng(1).normal(0, 0.01, 60)))
    config = {"regression": {"method": "edivisive", "comparison_keys": [], "ignored_keys": ["run_id"],
                             "sorting_keys": []}}
    arms = {"cached": contextlib.nullcontext, "built_per_call": built_per_call}
    rounds = {arm: {"find_change_points_us": [], "resolve_options_us": [], "read_section_us": [], "analyse_s": []}
              for arm in arms}
    with tempfile.TemporaryDirectory() as tmp:
        store = stores.open_store({"backend": "sqlite", "timeout_s": 60, "sqlite": {"path": os.path.join(tmp, "h.db")}})
        store.ensure_schema()
        fill(store)
        settings = verdicts.effective_settings(config_schema.read_section(config, "regression"), {})
        verdicts.analyse(payloads(), store, settings, "w")   # warm: imports, SQLite's history index
        for _round in range(ROUNDS):
            for arm, context in arms.items():
                with context():
                    rounds[arm]["find_change_points_us"].append(
                        1e6 * per_call(lambda: methods.find_change_points(series), CALLS))
                    rounds[arm]["resolve_options_us"].append(
                        1e6 * per_call(lambda: methods.resolve_options("edivisive", {"window": 10}), CALLS))
                    rounds[arm]["read_section_us"].append(
                        1e6 * per_call(lambda: config_schema.read_section(config, "regression"), CALLS // 10))
                    started = time.perf_counter()
                    summary, _records, _details = verdicts.analyse(payloads(), store, settings, "w")
                    rounds[arm]["analyse_s"].append(time.perf_counter() - started)
                    assert summary["kpis_with_history"] == ENTRIES * len(KPIS), summary["kpis_with_history"]
        store.close()
    medians = {arm: {key: _common.median(values) for key, values in measures.items()} for arm, measures in rounds.items()}
    _common.record("verdict_hot_paths", {
        "rounds": ROUNDS, "entries": ENTRIES, "kpis": len(KPIS), "history_runs": HISTORY, "calls": CALLS,
        "rounds_measured": rounds, "median": medians,
        "built_per_call_over_cached": {key: medians["built_per_call"][key] / medians["cached"][key]
                                       for key in medians["cached"]},
        "load_average": os.getloadavg(),
    })


if __name__ == "__main__":
    sys.exit(main())
