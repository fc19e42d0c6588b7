"""make gpu-check's tool (tools/gpu_check.py), the parts that need no GPU: its arguments, its refusal
without a GPU (one line, status 3, nothing run or written), the reference's arithmetic and timing loop
(on a fake torch), reading the run's tree, the comparison, the report, the choice of model server - and
the whole check on a fake GPU."""

import importlib.util
import json
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(REPO, "tools", "gpu_check.py")
FIXTURES = os.path.join(REPO, "tests", "fixtures")


@pytest.fixture
def tool():
    spec = importlib.util.spec_from_file_location("gpu_check_tool", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def typed_gpu(product="NVIDIA H200"):
    from ansible_collections.perfscale.topsail.plugins.module_utils.run import gpu_inventory

    with open(os.path.join(FIXTURES, "nvidia-smi", "netdata-tesla-p100.xml"), encoding="utf-8") as handle:
        gpu = gpu_inventory.parse_nvidia_smi_xml(handle.read())["gpus"][0]
    gpu["product_name"] = product
    return gpu


# --------------------------------------------------------------------------
# a fake torch: CUDA events whose elapsed time is the products recorded between them at a given rate


class FakeEvent:
    def __init__(self, torch):
        self.torch, self.at = torch, None

    def record(self):
        self.torch.log.append("record")
        self.at = self.torch.products

    def synchronize(self):
        self.torch.log.append("event.synchronize")

    def elapsed_time(self, end):
        if self.torch.elapsed_ms:
            return self.torch.elapsed_ms.pop(0)
        flop = 2 * self.torch.size ** 3 * (end.at - self.at)
        return flop / (self.torch.rate_tflops[self.torch.dtype] * 1e12) * 1e3


class FakeCuda:
    def __init__(self, torch, available):
        self.torch, self.available = torch, available

    def is_available(self):
        return self.available

    def Event(self, enable_timing):  # noqa: N802 (torch's name)
        assert enable_timing is True
        return FakeEvent(self.torch)

    def synchronize(self):
        self.torch.log.append("synchronize")

    @staticmethod
    def get_device_name():
        return "NVIDIA H200"


class FakeTorch:
    __version__ = "2.13.0+cu130"
    float32, float16, bfloat16 = "float32", "float16", "bfloat16"

    def __init__(self, available=True, rate_tflops=None, elapsed_ms=None):
        self.cuda = FakeCuda(self, available)
        self.version = type("version", (), {"cuda": "13.0" if available else None})
        matmul = type("matmul", (), {"allow_tf32": False})
        self.backends = type("backends", (), {"cuda": type("cuda", (), {"matmul": matmul})})
        self.rate_tflops = rate_tflops or {}
        self.elapsed_ms = list(elapsed_ms or [])
        self.log, self.products, self.size, self.dtype = [], 0, None, None

    def randn(self, shape, device, dtype):
        self.log.append(("randn", shape, device, dtype))
        self.size, self.dtype = shape[0], dtype
        return object()

    def empty(self, shape, device, dtype):
        self.log.append(("empty", shape, device, dtype))
        return object()

    def matmul(self, a, b, out):
        assert out is not None
        self.log.append("matmul")
        self.products += 1


# --------------------------------------------------------------------------
# arguments


def test_the_defaults(tool, tmp_path):
    args = tool.parse_args([], now=__import__("datetime").datetime(2026, 5, 4, 3, 2, 1))
    assert args.artifacts == os.path.join(REPO, "artifacts", "gpu-check", "20260504T030201Z")
    assert args.results == os.path.join(REPO, "benchmarks", "results")
    assert (args.timings, args.warmup, args.flop_per_timing, args.tolerance) == (7, 3, 2e13, 0.10)
    assert (args.llm, args.model, args.llm_duration) == ("auto", None, 5.0)


@pytest.mark.parametrize("argv,message", [
    (["--timings", "0"], "gpu-check: argument --timings: '0': expected a whole number of at least 1 (see --help)"),
    (["--warmup", "two"], "gpu-check: argument --warmup: 'two' is not a whole number (see --help)"),
    (["--tolerance", "1.5"],
     "gpu-check: argument --tolerance: '1.5': expected a fraction between 0 and 1 (0.1 is 10 %) (see --help)"),
    (["--flop-per-timing", "nan"], "gpu-check: argument --flop-per-timing: 'nan': expected a finite number above 0 "
                                   "(see --help)"),
    (["--llm", "ollama"], "gpu-check: argument --llm: invalid choice: 'ollama' (choose from auto, vllm, transformers, "
                          "none) (see --help)"),
    (["--surprise"], "gpu-check: unrecognized arguments: --surprise (see --help)"),
])
def test_a_bad_argument_is_one_line(tool, argv, message):
    with pytest.raises(tool.GpuCheckError) as error:
        tool.parse_args(argv)
    assert str(error.value).replace("'auto', 'vllm', 'transformers', 'none'", "auto, vllm, transformers, none") \
        == message
    assert error.value.status == 2


def test_a_model_must_be_a_local_directory_and_the_artifacts_new(tool, tmp_path):
    with pytest.raises(tool.GpuCheckError) as error:
        tool.parse_args(["--model", "Qwen/Qwen3-0.6B"])
    assert str(error.value) == ("gpu-check: --model Qwen/Qwen3-0.6B: not a directory; expected a local model "
                                "directory (nothing is downloaded)")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "run.json").write_text("{}")
    with pytest.raises(tool.GpuCheckError) as error:
        tool.parse_args(["--artifacts", str(tmp_path / "old")])
    assert str(error.value) == ("gpu-check: --artifacts %s: exists and is not an empty directory; expected a new "
                                "directory (a run is never mixed with an earlier one)" % (tmp_path / "old"))
    (tmp_path / "empty").mkdir()
    assert tool.parse_args(["--artifacts", str(tmp_path / "empty")]).artifacts == str(tmp_path / "empty")


def test_main_with_a_bad_argument_prints_one_line_and_writes_nothing(tool, tmp_path, capsys):
    assert tool.main(["--timings", "-3", "--results", str(tmp_path / "results")]) == 2
    captured = capsys.readouterr()
    assert captured.err == "gpu-check: argument --timings: '-3': expected a whole number of at least 1 (see --help)\n"
    assert captured.out == "" and not os.listdir(tmp_path)


# --------------------------------------------------------------------------
# without a GPU


def refuse_to_run(*_args, **_kwargs):
    raise AssertionError("nothing may run without a GPU")


def test_without_torch_one_line_status_3_nothing_run_or_written(tool, tmp_path, capsys, monkeypatch):
    def no_torch():
        raise ImportError("No module named 'torch'")

    monkeypatch.setattr(tool, "import_torch", no_torch)
    monkeypatch.setattr(tool, "run_playbook", refuse_to_run)
    status = tool.main(["--artifacts", str(tmp_path / "run"), "--results", str(tmp_path / "results")])
    assert status == 3
    captured = capsys.readouterr()
    assert captured.err == ("gpu-check: no GPU: torch is not installed (No module named 'torch'); pip install -r "
                            "requirements-torch.txt, with a CUDA build; nothing was run or written\n")
    assert captured.out == "" and not os.listdir(tmp_path)


def test_without_cuda_one_line_status_3_nothing_run_or_written(tool, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(tool, "import_torch", lambda: FakeTorch(available=False))
    monkeypatch.setattr(tool, "run_playbook", refuse_to_run)
    assert tool.main(["--artifacts", str(tmp_path / "run"), "--results", str(tmp_path / "results")]) == 3
    assert capsys.readouterr().err == ("gpu-check: no GPU: torch.cuda.is_available() is false (torch 2.13.0+cu130, "
                                       "built for CUDA none: a CPU-only build); nothing was run or written\n")
    assert not os.listdir(tmp_path)


def test_this_machine_has_no_gpu_and_the_real_torch_says_so(tool, tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert tool.main(["--artifacts", str(tmp_path / "run"), "--results", str(tmp_path / "results")]) == 3
    err = capsys.readouterr().err
    assert err.startswith("gpu-check: no GPU: torch.cuda.is_available() is false (torch %s" % torch.__version__)
    assert err.count("\n") == 1 and not os.listdir(tmp_path)


# --------------------------------------------------------------------------
# the reference


def test_the_flop_count_and_rate_of_a_product(tool):
    assert tool.flop_per_product(1024) == 2 * 1024 ** 3 == 2_147_483_648
    assert tool.flop_per_product(3) == 54                          # 9 dot products of 3 multiply-adds
    assert tool.tflops(8192, 10, 0.01) == pytest.approx(2 * 8192 ** 3 * 10 / 0.01 / 1e12)
    assert tool.tflops(1024, 1000, 2 * 1024 ** 3 * 1000 / 500e12) == pytest.approx(500)


@pytest.mark.parametrize("size,budget,products", [
    (1024, 2e13, 9314),             # 2e13 / 2.147e9, rounded up
    (8192, 2e13, 19),               # 2e13 / 1.1e12
    (8192, 1e9, 8),                 # never fewer than 8
    (64, 2e13, 100_000),            # never more than 100 000
])
def test_products_per_timing(tool, size, budget, products):
    assert tool.products_per_timing(size, budget) == products


def test_the_reference_times_n_products_between_two_events_after_a_warm_up_and_takes_the_median(tool):
    torch = FakeTorch(elapsed_ms=[5.0, 4.0, 6.0])
    flop_budget = 2 * 1024 ** 3 * 10                               # 10 products per timing
    result = tool.time_reference(torch, 1024, "bfloat16", timings=3, warmup=2, flop_budget=flop_budget)
    assert result["products"] == 10 and result["timings"] == 3
    assert result["median_s"] == pytest.approx(0.005)
    assert result["tflops"] == pytest.approx(2 * 1024 ** 3 * 10 / 0.005 / 1e12)
    assert result["spread"] == pytest.approx(0.4)
    assert torch.log[:3] == [("randn", (1024, 1024), "cuda", "bfloat16"), ("randn", (1024, 1024), "cuda", "bfloat16"),
                             ("empty", (1024, 1024), "cuda", "bfloat16")]
    timing = ["record"] + ["matmul"] * 10 + ["record", "event.synchronize"]
    assert torch.log[3:] == ["matmul", "matmul", "synchronize"] + timing * 3


# --------------------------------------------------------------------------
# the run's tree, the comparison, the report


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def gpu_point(root, index, dtype, size, rate_gflops):
    document = {"name": "matmul", "framework": "torch",
                "@parameters": {"backend": "torch", "device": "cuda", "dtype": dtype, "size": size},
                "@result": {"rate": rate_gflops, "time_cv": 0.01, "reps_per_batch": 8},
                "environment": {"device_name": "NVIDIA H200", "torch": "2.13.0+cu130", "cuda": "13.0"}}
    write(os.path.join(root, "001__matbenchmarking", "%03d__matmul_%s_%d" % (index, dtype, size), "output.json"),
          json.dumps(document))


def fake_run(root, sizes, dtypes, rate_gflops):
    write(os.path.join(root, "000__host__capture_environment", "environment.json"),
          json.dumps({"gpus": [typed_gpu()], "collection": {"version": "0.1.0", "git_commit": "abc123"}}))
    index = 0
    for size in sizes:
        for dtype in dtypes:
            gpu_point(root, index, dtype, size, rate_gflops[dtype])
            index += 1


def test_the_run_is_read_point_by_point_a_bad_point_alone_failing(tool, tmp_path):
    root = str(tmp_path / "run")
    fake_run(root, [1024], ["bfloat16"], {"bfloat16": 500_000.0})
    matrix = os.path.join(root, "001__matbenchmarking")
    write(os.path.join(matrix, "001__matmul_float16_1024", "FAILURE"), "harness exited with 3: CUDA out of memory\nx\n")
    write(os.path.join(matrix, "002__matmul_float32_1024", "output.json"), "{not json")
    write(os.path.join(matrix, "003__matmul_float32_2048", "output.json"), json.dumps({"@result": {"rate": "fast"}}))
    write(os.path.join(matrix, "matrix.yaml"), "points: []\n")
    run = tool.collect_run(root)
    assert run["gpus"][0]["product_name"] == "NVIDIA H200" and run["environment"]["collection"]["version"] == "0.1.0"
    good = run["points"][("bfloat16", 1024)]
    assert (good["rate_gflops"], good["device_name"], good["torch"], good["error"]) == (
        500_000.0, "NVIDIA H200", "2.13.0+cu130", None)
    assert run["points"][("float16", 1024)]["error"] == "harness exited with 3: CUDA out of memory"
    assert run["points"][("float32", 1024)]["error"].startswith("output.json: ")
    assert run["points"][("float32", 2048)]["error"] == (
        "output.json: @result.rate is 'fast', expected a positive number (GFLOP/s)")
    assert set(run["points"]) == {("bfloat16", 1024), ("float16", 1024), ("float32", 1024), ("float32", 2048)}


def test_a_run_without_an_environment_capture_has_no_inventory(tool, tmp_path):
    assert tool.collect_run(str(tmp_path)) == {"points": {}, "gpus": None, "environment": {}}


def test_the_comparison_of_both_rates_with_the_datasheet_peak(tool):
    from ansible_collections.perfscale.topsail.plugins.module_utils import gpu_peaks

    collected = {("bfloat16", 1024): {"rate_gflops": 500_000.0, "error": None},
                 ("float32", 1024): {"rate_gflops": 40_000.0, "error": None},
                 ("float16", 1024): {"error": "harness exited with 3: CUDA out of memory"}}
    reference = {("bfloat16", 1024): {"tflops": 520.0}, ("float32", 1024): {"tflops": 50.0},
                 ("float16", 1024): {"tflops": 600.0}}
    rows = tool.compare(collected, reference, "NVIDIA H200", [1024], ["bfloat16", "float32", "float16"], 0.10,
                        gpu_peaks)
    bf16, fp32, fp16 = rows
    assert bf16["ratio"] == pytest.approx(500 / 520) and bf16["agree"] is True
    assert bf16["peak_tflops"] == 989.5 and bf16["collection_pct"] == pytest.approx(100 * 500 / 989.5)
    assert bf16["reference_pct"] == pytest.approx(100 * 520 / 989.5) and bf16["peak_note"] is None
    assert fp32["ratio"] == pytest.approx(0.8) and fp32["agree"] is False and fp32["peak_tflops"] == 67
    assert fp16["ratio"] is None and fp16["agree"] is False
    assert fp16["error"] == "harness exited with 3: CUDA out of memory"
    unknown = tool.compare(collected, reference, "NVIDIA GeForce RTX 4090", [1024], ["bfloat16"], 0.10, gpu_peaks)[0]
    assert unknown["peak_tflops"] is None and unknown["peak_note"] == (
        "GPU product 'NVIDIA GeForce RTX 4090' is not in the peak table (plugins/module_utils/gpu_peaks.py)")


def fake_result(**changes):
    result = {
        "product": "NVIDIA H200", "peak_product": "H200 SXM", "date": "2026-05-04 03:02 UTC",
        "artifacts": "/runs/gpu-check/20260504T030201Z", "playbook_status": 0, "tolerance": 0.1, "tf32_allowed": False,
        "reference": {"timings": 7, "warmup": 3, "flop_per_timing": 2e13},
        "rows": [{"size": 8192, "dtype": "bfloat16", "collection_tflops": 748.0, "reference_tflops": 760.0,
                  "ratio": 748 / 760, "agree": True, "peak_tflops": 989.5, "collection_pct": 75.59,
                  "reference_pct": 76.81, "peak_note": None, "error": None},
                 {"size": 1024, "dtype": "float16", "collection_tflops": None, "reference_tflops": 400.0,
                  "ratio": None, "agree": False, "peak_tflops": 989.5, "collection_pct": None, "reference_pct": 40.42,
                  "peak_note": "the H200 SXM fp16 peak (989.5 TFLOP/s) is unconfirmed: a test",
                  "error": "harness exited with 3: CUDA | out of memory"}],
        "gpus": [typed_gpu()], "inventory_error": None, "llm_duration": 5.0,
        "llm": {"backend": "vllm", "where": "vLLM, model /models/qwen, on the GPU", "exit_status": 0,
                "summary": {"request_throughput": 12.3456, "ttft_p50_ms": 20.5, "client_bound": False,
                            "error_rate": None}},
        "versions": {"NVIDIA driver": "580.159.04", "CUDA (driver)": "13.0", "CUDA (torch)": "13.0",
                     "torch": "2.13.0+cu130", "Python": "3.11.7", "collection": "0.1.0", "collection commit": None},
    }
    result.update(changes)
    return result


def test_the_report_of_a_check(tool):
    text = tool.render_report(fake_result())
    lines = text.splitlines()
    assert lines[0] == "# GPU check: NVIDIA H200"
    assert "| 8192 | bfloat16 | 748.0 | 760.0 | 0.984 | agrees | 989.5 | 75.6 | 76.8 |  |" in lines
    assert ("| 1024 | float16 | n/a | 400.0 | n/a | n/a | 989.5 | n/a | 40.4 | harness exited with 3: CUDA / out of "
            "memory; the H200 SXM fp16 peak (989.5 TFLOP/s) is unconfirmed: a test |") in lines
    assert "| product | NVIDIA H200 |" in lines
    assert "| driver | %s |" % typed_gpu()["driver_version"] in lines
    assert "| memory total (MiB) | %s |" % typed_gpu()["memory"]["total_mib"] in lines
    assert "Peak: the dense datasheet figure of H200 SXM" in text and "within 10 %" in text
    assert "TF32 for float32 products: not allowed (torch's default)" in text
    assert "| request_throughput | 12.3 |" in lines and "| client_bound | False |" in lines
    assert "| error_rate | n/a |" in lines
    assert "Server: vLLM, model /models/qwen, on the GPU; harness exit status 0" in text
    assert "| NVIDIA driver | 580.159.04 |" in lines and "| collection commit | n/a |" in lines
    assert text.endswith("|\n") and "2026-05-04 03:02 UTC" in text and "/runs/gpu-check/20260504T030201Z" in text


def test_the_report_says_why_the_llm_part_was_skipped_and_when_no_inventory_was_captured(tool):
    text = tool.render_report(fake_result(
        llm={"skipped": "LLM load: skipped: neither vLLM nor transformers serve is installed"}, gpus=None,
        inventory_error="environment.json: not JSON"))
    assert "\nLLM load: skipped: neither vLLM nor transformers serve is installed\n" in text
    assert "\nNo inventory was captured: environment.json: not JSON.\n" in text


def test_the_report_is_written_whole_under_the_products_name(tool, tmp_path):
    path = tool.write_report(str(tmp_path / "results"), "NVIDIA H100 80GB HBM3", "# report\n")
    assert path == str(tmp_path / "results" / "gpu-nvidia-h100-80gb-hbm3.md")
    assert open(path, encoding="utf-8").read() == "# report\n" and os.listdir(tmp_path / "results") == [
        "gpu-nvidia-h100-80gb-hbm3.md"]
    assert tool.product_slug("AMD Instinct MI300X") == "amd-instinct-mi300x"
    assert tool.product_slug("..") == "unknown-gpu"


# --------------------------------------------------------------------------
# the model server


def specs(*installed):
    return lambda name: object() if name in installed else None


SERVE = ("transformers", "fastapi", "uvicorn", "openai", "accelerate")


@pytest.mark.parametrize("choice,model,installed,expected", [
    ("auto", "/m", ("vllm",) + SERVE, ("vllm", "/m", None)),
    ("auto", None, ("vllm",) + SERVE, ("transformers", None, None)),
    ("auto", None, SERVE, ("transformers", None, None)),
    ("transformers", "/m", ("vllm",) + SERVE, ("transformers", "/m", None)),
    ("auto", None, ("vllm",), (None, None, "LLM load: skipped: vLLM is installed but needs a model: pass --model "
                                           "PATH, a local model directory (nothing is downloaded)")),
    ("auto", None, ("transformers",), (None, None, "LLM load: skipped: neither vLLM nor transformers serve is "
                                                   "installed")),
    ("none", "/m", ("vllm",) + SERVE, (None, None, "LLM load: skipped (--llm none)")),
])
def test_which_server_runs(tool, choice, model, installed, expected):
    assert tool.decide_llm(choice, model, find_spec=specs(*installed)) == expected


@pytest.mark.parametrize("choice,model,installed,message", [
    ("vllm", "/m", SERVE, "gpu-check: --llm vllm: vLLM is not installed (pip install vllm)"),
    ("vllm", None, ("vllm",), "gpu-check: --llm vllm needs --model PATH, a local model directory (nothing is "
                              "downloaded)"),
    ("transformers", None, ("vllm", "transformers"), "gpu-check: --llm transformers: transformers serve is not "
                                                     "installed (pip install -r requirements-test-server.txt)"),
])
def test_a_server_that_cannot_run_is_one_line(tool, choice, model, installed, message):
    with pytest.raises(tool.GpuCheckError) as error:
        tool.decide_llm(choice, model, find_spec=specs(*installed))
    assert str(error.value) == message and error.value.status == 2


def test_servers_listen_on_loopback_and_download_nothing(tool):
    command, served, where = tool.server_command("vllm", "/models/qwen", 8123, "/run/llm_model")
    assert command[1:] == ["-m", "vllm.entrypoints.openai.api_server", "--model", "/models/qwen", "--host",
                           "127.0.0.1", "--port", "8123"] and served == "/models/qwen"
    command, served, where = tool.server_command("transformers", None, 8123, "/run/llm_model")
    assert command[1:] == [tool.TINY_SERVER, "/run/llm_model", "--port", "8123"] and "on the CPU" in where
    command, _served, _where = tool.server_command("transformers", "/models/qwen", 8123, "/run/llm_model")
    assert command[command.index("--host") + 1] == "127.0.0.1" and command[command.index("--device") + 1] == "cuda"


# --------------------------------------------------------------------------
# the whole check on a fake GPU


def test_the_whole_check_on_a_fake_gpu_writes_the_report(tool, tmp_path, monkeypatch, capsys):
    rates = {"float32": 50.0, "float16": 700.0, "bfloat16": 720.0}          # TFLOP/s the fake GPU reaches
    torch = FakeTorch(rate_tflops=rates)
    monkeypatch.setattr(tool, "import_torch", lambda: torch)
    sizes, dtypes = tool.preset_points()
    assert sizes == [1024, 2048, 4096, 8192] and dtypes == ["float32", "float16", "bfloat16"]

    def playbook(artifacts):
        collection_rates = {dtype: rate * 1e3 * (0.97 if dtype != "float32" else 0.5) for dtype, rate in rates.items()}
        fake_run(artifacts, sizes, dtypes, collection_rates)
        return ["ansible-playbook"], 0

    monkeypatch.setattr(tool, "run_playbook", playbook)
    results = tmp_path / "results"
    status = tool.main(["--artifacts", str(tmp_path / "run"), "--results", str(results), "--llm", "none",
                        "--timings", "3", "--warmup", "1", "--flop-per-timing", "1e12"])
    assert status == 1                                     # float32 measured at half the reference's rate
    text = (results / "gpu-nvidia-h200.md").read_text(encoding="utf-8")
    assert "| 8192 | bfloat16 | 698.4 | 720.0 | 0.970 | agrees | 989.5 | 70.6 | 72.8 |  |" in text
    assert "| 1024 | float32 | 25.0 | 50.0 | 0.500 | DISAGREES | 67 | 37.3 | 74.6 |  |" in text
    assert "LLM load: skipped (--llm none)" in text and "| torch | 2.13.0+cu130 |" in text
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == ("gpu-check: %s written; 8 of 12 points agree within 10 %%; playbook exit status "
                                    "0; LLM load: skipped (--llm none)" % (results / "gpu-nvidia-h200.md"))
    assert os.listdir(results) == ["gpu-nvidia-h200.md"]


def test_values_from_the_run_stay_in_their_table_cell(tool):
    gpu = typed_gpu("NVIDIA H200 | evil\n# heading")
    text = tool.render_report(fake_result(
        gpus=[gpu], llm={"backend": "vllm", "where": "vLLM", "exit_status": 0,
                         "summary": {"client_bound": "yes |\n| injected | row"}}))
    assert "| product | NVIDIA H200 / evil # heading |" in text.splitlines()
    assert "| client_bound | yes / / injected / row |" in text.splitlines()
    assert "\n# heading" not in text and "| injected |" not in text
