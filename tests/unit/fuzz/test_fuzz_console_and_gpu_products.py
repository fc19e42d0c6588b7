"""Fuzz: a GPU product a user or a node label names, and what the console prints of task names and
messages. Whatever the text, the planner answers a memory or one line (with what the user may have
meant, only known products), and the console's lines are one line each."""

from hypothesis import given, strategies as st

from ansible_collections.perfscale.topsail.plugins.module_utils.capacity import gpus
from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CapacityError
from ansible_collections.perfscale.topsail.plugins.module_utils.run import console

PRODUCTS = st.one_of(st.text(max_size=80), st.sampled_from(sorted(gpus.GPUS)).map(str.lower),
                     st.sampled_from(["H100", "a10", "NVIDIA-H900", "Tesla-", "NVIDIA-", "-", "-SHARED",
                                      "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "x" * 70]))
LINE_BREAKS = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


@given(PRODUCTS)
def test_any_gpu_product_is_a_memory_or_one_line(product):
    try:
        memory_gib, how = gpus.product_memory(product)
    except CapacityError as exc:
        message = str(exc)
        assert message and not any(mark in message for mark in LINE_BREAKS), repr(message)
    else:
        assert memory_gib > 0 and how
    meant = gpus.close_products(product)
    assert len(meant) <= gpus.SUGGESTIONS and set(meant) <= set(gpus.GPUS)


MESSAGES = st.recursive(st.one_of(st.none(), st.text(max_size=60), st.integers(), st.floats(allow_nan=True)),
                        lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                        max_leaves=12)


@given(st.text(max_size=300), st.text(max_size=20), MESSAGES)
def test_every_console_line_is_one_line(name, host, message):
    lines = [console.task_line("ok", name, host=host, items=2, retries=1, seconds=3.0), console.play_line(name),
             console.recap_line(host, {"ok": 1})] + console.message_lines(message)
    for line in lines:
        assert line.strip() and not any(mark in line for mark in LINE_BREAKS), repr(line)
