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
    ("matmul", {"peak_gflops": "nan"}, "peak_gflops must be a finite number, got nan"),
    ("matmul", {"min_batch_ms": "inf"}, "min_batch_ms must be a finite number, got inf"),
    ("matmul", {"min_batch_ms": 0}, "min_batch_ms must be > 0, got 0.0"),
    ("matmul", {"min_batch_ms": 10 ** 400}, "min_batch_ms must be a number, got 1000"),
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


class FakeCuda:
    """A CUDA device on a simulated clock: each kernel adds its duration, an event records the time
    when the device reaches it; the log holds every call in order."""

    def __init__(self, kernel_ms):
        self.kernel_ms = list(kernel_ms)   # durations of the kernels, in launch order (the last repeats)
        self.clock_ms = 0.0
        self.log = []
        self.kernels = 0
        fake = self

        class Event:
            def __init__(self, enable_timing):
                assert enable_timing
                self.stamp = None

            def record(self):
                fake.log.append("record")
                self.stamp = fake.clock_ms

            def synchronize(self):
                fake.log.append("event.synchronize")

            def elapsed_time(self, end):
                assert self.stamp is not None and end.stamp is not None, "elapsed_time of an unrecorded event"
                return end.stamp - self.stamp

        self.cuda = types.SimpleNamespace(Event=Event, synchronize=lambda: self.log.append("device.synchronize"))

    def kernel(self):
        self.log.append("kernel")
        self.clock_ms += self.kernel_ms[min(self.kernels, len(self.kernel_ms) - 1)]
        self.kernels += 1

    def timed_batches(self):
        """The number of kernels between each pair of records, in order."""
        counts, inside = [], None
        for entry in self.log:
            if entry == "record":
                if inside is None:
                    inside = 0
                else:
                    counts.append(inside)
                    inside = None
            elif entry == "kernel" and inside is not None:
                inside += 1
        return counts


def test_time_cuda_times_batches_of_back_to_back_kernels_between_two_events():
    fake = FakeCuda([1.0])   # 1 ms per kernel
    times, batch = pi.time_cuda(fake, fake.kernel, warmup=2, reps=3, min_batch_s=0.010)
    # calibration: batches of 1, 2, 4, 8 last less than 10 ms, 16 lasts 16 ms
    assert batch == 16
    assert fake.timed_batches() == [1, 2, 4, 8, 16] + [16] * 3
    assert times == [0.001] * 3        # each batch's 16 ms / 16 repetitions
    # warm-up, then the device is synchronized before the calibration and before the timed batches
    assert fake.log[:3] == ["kernel", "kernel", "device.synchronize"]
    calibration_end = 3 + sum(n + 3 for n in [1, 2, 4, 8, 16])
    assert fake.log[calibration_end] == "device.synchronize"
    # each timed batch: record, the kernels, record, then wait for the end event
    assert fake.log[calibration_end + 1:] == (["record"] + ["kernel"] * 16 + ["record", "event.synchronize"]) * 3


def test_the_spread_across_batches_stays_reported_per_repetition():
    # the calibration kernels take 1 ms; then batches of 4 kernels of 1, 1.5 and 2 ms
    fake = FakeCuda([1.0] * 7 + [1.0] * 4 + [1.5] * 4 + [2.0] * 4)
    times, batch = pi.time_cuda(fake, fake.kernel, warmup=0, reps=3, min_batch_s=0.004)
    assert batch == 4 and fake.timed_batches() == [1, 2, 4, 4, 4, 4]
    assert times == pytest.approx([0.001, 0.0015, 0.002])
    result = pi.summarize(times, flop=2e9, reps_per_batch=batch)
    assert result["time_median"] == pytest.approx(0.0015) and result["rate"] == pytest.approx(2e9 / 0.0015 / 1e9)
    assert result["elapsed"] == pytest.approx(0.018)      # 4 ms + 6 ms + 8 ms of timed kernels
    assert (result["timed_batches"], result["reps_per_batch"], result["timed_reps"]) == (3, 4, 12)
    assert result["time_cv"] > 0


def test_the_batch_size_is_bounded_and_a_slow_kernel_is_timed_alone():
    fake = FakeCuda([0.0])    # a kernel too short to ever reach the minimum batch time
    times, batch = pi.time_cuda(fake, fake.kernel, warmup=0, reps=2, min_batch_s=0.010, max_batch=64)
    assert batch == 64 and fake.timed_batches() == [1, 2, 4, 8, 16, 32, 64, 64]
    assert times == [0.0, 0.0]
    slow = FakeCuda([25.0])
    times, batch = pi.time_cuda(slow, slow.kernel, warmup=1, reps=2, min_batch_s=0.010)
    assert batch == 1 and slow.timed_batches() == [1, 1, 1] and times == [0.025, 0.025]


def test_a_cuda_indicator_runs_its_timings_through_batches(monkeypatch):
    fake = FakeCuda([2.0])
    calls = {}

    def time_cuda(torch, operation, warmup, reps, min_batch_s):
        calls.update(warmup=warmup, reps=reps, min_batch_s=min_batch_s)
        return [0.002] * reps, 8

    monkeypatch.setattr(pi, "time_cuda", time_cuda)
    monkeypatch.setattr(pi, "_torch_operation", lambda torch, indicator, params: fake.kernel)
    monkeypatch.setattr(pi, "environment", lambda backend, device, torch: {"device_name": "NVIDIA H200"})
    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: True), set_num_threads=None)
    monkeypatch.setitem(__import__("sys").modules, "torch", torch)
    document = pi.run_indicator("matmul", {"backend": "torch", "device": "cuda", "size": 1024, "dtype": "bfloat16",
                                           "reps": 5, "warmup": 3, "min_batch_ms": 4})
    assert calls == {"warmup": 3, "reps": 5, "min_batch_s": 0.004}
    result = document["@result"]
    assert (result["timed_batches"], result["reps_per_batch"], result["timed_reps"]) == (5, 8, 40)
    assert result["rate"] == pytest.approx(2 * 1024 ** 3 / 0.002 / 1e9)
    assert result["elapsed"] == pytest.approx(0.08)
    harness_base.validate_output(json.dumps(document))


def test_cuda_timing_on_a_real_gpu_amortises_the_launch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    document = pi.run_indicator("matmul", {"backend": "torch", "device": "cuda", "size": 1024, "dtype": "bfloat16",
                                           "reps": 5, "warmup": 3, "min_batch_ms": 5})
    result = document["@result"]
    assert result["reps_per_batch"] > 1                    # a 1024 bf16 product lasts far less than 5 ms
    assert result["time_median"] * result["reps_per_batch"] >= 0.005 * 0.5
    assert result["timed_reps"] == 5 * result["reps_per_batch"] and result["rate"] > 0
    assert document["environment"]["compute_capability"].count(".") == 1


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
