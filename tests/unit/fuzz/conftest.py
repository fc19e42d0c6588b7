"""Property-based (fuzz) tests of every parser of outside data.

One Hypothesis profile for all of them: derandomized (the same examples on every run, in CI and
here: a failure reproduces), a bounded number of examples, no example database written into the
tree, no deadline (a loaded CI machine must not fail a test for being slow). Each test asserts the
boundary's contract: a result or a one-line error, never a traceback, never a write outside its
directory.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("perfscale-fuzz", derandomize=True, database=None, deadline=None, max_examples=150,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# make check (the inner loop): the same properties, fewer examples
settings.register_profile("perfscale-fuzz-quick", parent=settings.get_profile("perfscale-fuzz"), max_examples=20)
settings.load_profile(os.environ.get("PERFSCALE_FUZZ_PROFILE", "perfscale-fuzz"))
