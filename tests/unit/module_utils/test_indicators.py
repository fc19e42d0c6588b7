import json
import types

import numpy as np
import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import base as harness_base
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses import indicators as pi


def naive_conv(inputs, weights, stride, padding):
    """Direct definition of the (cross-)correlation used by deep-learning frameworks."""
    dims = inputs.ndim - 2
    pad = [(0, 0), (0, 0)] + [(padding, padding)] * dims
    x = np.pad(inputs, pad)
    batch, channels = inputs.shape[:2]
    filters, kernel = weights.shape[0], weights.shape[2:]
    out = [(x.shape[2 + d] - kernel[d]) // stride + 1 for d in range(dims)]
    result = np.zeros([batch] + out + [filters])
    for b in range(batch):
        for f in range(filters):
            for position in np.ndindex(*out):
                window = tuple(slice(p * stride, p * stride + k) for p, k in zip(position, kernel))
                result[(b,) + position + (f,)] = np.sum(x[(b, slice(None)) + window] * weights[f])
    return result


@pytest.mark.parametrize("stride,padding", [(1, 0), (1, 1), (2, 1), (3, 2)])
def test_numpy_conv2d_matches_the_definition(stride, padding):
    rng = np.random.default_rng(1)
    inputs = rng.standard_normal((2, 3, 9, 7))
    weights = rng.standard_normal((4, 3, 3, 3))
    got = pi.numpy_conv(np, inputs, weights, stride, padding, 2)
    np.testing.assert_allclose(got, naive_conv(inputs, weights, stride, padding), rtol=1e-10)


@pytest.mark.parametrize("stride,padding", [(1, 0), (2, 2)])
def test_numpy_conv1d_matches_the_definition(stride, padding):
    rng = np.random.default_rng(2)
    inputs = rng.standard_normal((2, 3, 17))
    weights = rng.standard_normal((5, 3, 4))
    got = pi.numpy_conv(np, inputs, weights, stride, padding, 1)
    np.testing.assert_allclose(got, naive_conv(inputs, weights, stride, padding), rtol=1e-10)


def test_flop_counts_follow_the_operation_definition():
    assert pi.flop_count("matmul", {"size": 1024}) == 2 * 1024 ** 3
    params = pi.validate_settings("conv2d", {"batch": 2, "height": 9, "width": 7, "channels": 3, "filters": 4,
                                             "kernel": 3, "stride": 2, "padding": 1})
    out_h, out_w = (9 + 2 - 3) // 2 + 1, (7 + 2 - 3) // 2 + 1
    assert pi.flop_count("conv2d", params) == 2 * 2 * out_h * out_w * 4 * 3 * 9
    params = pi.validate_settings("conv1d", {"batch": 2, "length": 17, "channels": 3, "filters": 5, "kernel": 4,
                                             "stride": 2, "padding": 2})
    assert pi.flop_count("conv1d", params) == 2 * 2 * ((17 + 4 - 4) // 2 + 1) * 5 * 3 * 4


@pytest.mark.parametrize("indicator,settings,message", [
    ("matmull", {}, "unknown indicator 'matmull'; built-in indicators: conv1d, conv2d, matmul"),
    ("matmul", {"size": -1}, "size must be a positive integer, got -1"),
    ("matmul", {"size": 0}, "size must be a positive integer, got 0"),
    ("matmul", {"size": "big"}, "size must be an integer, got 'big'"),
    ("matmul", {"size": True}, "size must be an integer, got True"),
    ("matmul", {"height": 3}, "indicator matmul has no parameter 'height'"),
    ("matmul", {"dtype": "float16"}, "dtype 'float16' is not supported by backend numpy; supported: float32, float64"),
    ("matmul", {"device": "cuda"}, "device cuda needs backend torch"),
    ("matmul", {"backend": "jax"}, "backend must be one of numpy, torch, got 'jax'"),
    ("conv2d", {"height": 2, "kernel": 7, "padding": 1}, "kernel 7 is larger than the padded input (4)"),
    ("matmul", {"peak_gflops": -3}, "peak_gflops must be > 0"),
])
def test_invalid_settings_are_one_line_errors(indicator, settings, message):
    with pytest.raises(errors.IndicatorError) as error:
        pi.validate_settings(indicator, settings)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_time_cpu_does_not_time_warmup():
    calls = []
    ticks = iter(range(0, 10 ** 9, 10 ** 6))

    def operation():
        calls.append(1)

    times = pi.time_cpu(operation, warmup=3, reps=4, clock=lambda: next(ticks))
    assert len(calls) == 7
    assert times == [0.001] * 4


def test_time_cuda_times_kernels_with_events_and_synchronizes():
    log = []

    class Event:
        def __init__(self, enable_timing):
            assert enable_timing
            self.stamp = None

        def record(self):
            log.append("record")
            self.stamp = len(log)

        def synchronize(self):
            log.append("event.synchronize")

        def elapsed_time(self, end):
            return 5.0  # milliseconds

    cuda = types.SimpleNamespace(Event=Event, synchronize=lambda: log.append("device.synchronize"))
    torch = types.SimpleNamespace(cuda=cuda)
    times = pi.time_cuda(torch, lambda: log.append("kernel"), warmup=2, reps=3)
    assert times == [0.005] * 3
    assert log[:3] == ["kernel", "kernel", "device.synchronize"]
    assert log[3:] == ["record", "kernel", "record", "event.synchronize"] * 3


def test_summarize_rates_come_from_the_median():
    result = pi.summarize([0.5, 1.0, 2.0, 1.0, 4.0], flop=2e9)
    assert result["time_median"] == 1.0
    assert result["rate"] == pytest.approx(2.0)
    assert result["rate_best"] == pytest.approx(4.0)
    assert result["elapsed"] == pytest.approx(8.5)
    assert result["timed_reps"] == 5


def test_run_indicator_produces_a_valid_contract_document():
    document = pi.run_indicator("matmul", {"size": 64, "reps": 3, "warmup": 1, "peak_gflops": 1e6})
    harness_base.validate_output(json.dumps(document))
    assert document["name"] == "matmul" and document["framework"] == "numpy"
    assert document["@parameters"]["size"] == 64
    assert document["@result"]["flop"] == 2 * 64 ** 3
    assert 0 <= document["overall_score"] <= 1
    assert document["environment"]["numpy"] == np.__version__


def test_cli_prints_json_on_stdout_and_text_on_stderr(capsys):
    assert pi.main(["conv1d", "length=64", "reps=2", "warmup=0"]) == 0
    captured = capsys.readouterr()
    document = harness_base.validate_output(captured.out)
    assert document["@parameters"]["length"] == 64
    assert "GFLOP/s" in captured.err and "GFLOP/s" not in captured.out


def test_cli_rejects_bad_input_with_exit_2(capsys):
    assert pi.main(["matmul", "size=-5"]) == 2
    assert capsys.readouterr().err == "indicators: size must be a positive integer, got -5\n"
    assert pi.main(["matmul", "oops"]) == 2


def test_torch_backend_on_cpu_matches_the_contract():
    torch = pytest.importorskip("torch")
    document = pi.run_indicator("conv2d", {"backend": "torch", "height": 16, "width": 16, "reps": 2, "threads": 1})
    harness_base.validate_output(json.dumps(document))
    assert document["framework"] == "torch"
    assert document["environment"]["torch"] == torch.__version__
    assert document["environment"]["torch_threads"] == 1


def test_cuda_without_a_gpu_is_a_clear_error():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(errors.IndicatorError, match="device cuda requested but torch.cuda.is_available\\(\\) is false"):
        pi.run_indicator("matmul", {"backend": "torch", "device": "cuda", "size": 8})
