# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``make gpu-check``: the collection's GPU measurements held against an independent reference, on
this machine's NVIDIA GPU (docs/gpu-check.md).

1. runs ``ansible-playbook playbooks/benchmark.yml -e preset=gpu_matmul`` into a fresh artifact
   directory (ARTIFACTS, default ``artifacts/gpu-check/<UTC time>``);
2. times an independent loop-GEMM reference written here: for each size and dtype of the preset, N
   back-to-back ``torch.matmul(a, b, out=c)`` between two CUDA events, after a warm-up; the median of
   several timings gives TFLOP/s (2 n^3 floating-point operations per product);
3. when vLLM or ``transformers serve`` is installed, serves a small model on 127.0.0.1 and runs the
   LLM load harness against it for a few seconds (nothing is downloaded: vLLM needs ``--model`` a local
   directory; without it, transformers serve gets a tiny random-weight model built here, on the CPU);
4. writes ``benchmarks/results/gpu-<product>.md``: per size and dtype the collection's TFLOP/s, the
   reference's, their ratio, the share of the datasheet peak (plugins/module_utils/gpu_peaks.py), the
   typed GPU inventory, the load harness's summary, the versions and the date.

Without a GPU (torch missing, or ``torch.cuda.is_available()`` false) it prints one line and exits
with status 3, having run and written nothing. Status 2: a bad argument (one line). Status 1: the
report is written but the playbook failed, a point is missing or the two measurements disagree by
more than ``--tolerance``. Status 0: the report is written and every point agrees.
"""

import argparse
import datetime
import importlib
import importlib.util
import math
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS = os.path.join(REPO, ".venv", "collections")
PRESET = "gpu_matmul"
HARNESS = "ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load"
TINY_SERVER = os.path.join(REPO, "tests", "transformers_server.py")
EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_NO_GPU = 0, 1, 2, 3
# what transformers serve needs besides torch (requirements-test-server.txt)
TRANSFORMERS_SERVE_NEEDS = ("transformers", "fastapi", "uvicorn", "openai", "accelerate")
# the load harness's headline numbers the report shows, in this order
LLM_KEYS = ("request_throughput", "output_token_throughput", "ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms",
            "itl_p50_ms", "e2e_p50_ms", "error_rate", "achieved_rate", "client_bound", "short_output_share")
INVENTORY_FIELDS = (
    ("product", ("product_name",)), ("architecture", ("product_architecture",)),
    ("compute capability", ("compute_capability",)), ("driver", ("driver_version",)),
    ("CUDA (driver)", ("cuda_version",)), ("memory total (MiB)", ("memory", "total_mib")),
    ("SM clock max (MHz)", ("clocks_mhz", "sm_max")), ("memory clock max (MHz)", ("clocks_mhz", "memory_max")),
    ("power limit (W)", ("power", "limit_w")), ("default power limit (W)", ("power", "default_limit_w")),
    ("persistence mode", ("persistence_mode",)), ("compute mode", ("compute_mode",)),
    ("MIG enabled", ("mig", "enabled")), ("ECC enabled", ("ecc", "enabled")),
    ("PCIe generation (current/max)", ("pcie", "generation_current"), ("pcie", "generation_max")),
    ("PCIe width (current/max)", ("pcie", "width_current"), ("pcie", "width_max")),
    ("PCI bus id", ("pci_bus_id",)),
)


class GpuCheckError(Exception):
    """One line for the user; the exit status goes with it."""

    def __init__(self, message, status=EXIT_USAGE):
        super().__init__(message)
        self.status = status


class NoGpu(GpuCheckError):
    def __init__(self, message):
        super().__init__("gpu-check: no GPU: %s; nothing was run or written" % message, EXIT_NO_GPU)


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise GpuCheckError("gpu-check: %s (see --help)" % message)


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a whole number" % text) from None
    if value < 1:
        raise argparse.ArgumentTypeError("%r: expected a whole number of at least 1" % text)
    return value


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number" % text) from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError("%r: expected a finite number above 0" % text)
    return value


def _ratio(text):
    value = _positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError("%r: expected a fraction between 0 and 1 (0.1 is 10 %%)" % text)
    return value


def parse_args(argv, now=None):
    """The checked arguments; a bad one raises :class:`GpuCheckError` (one line, status 2)."""
    parser = _Parser(prog="gpu_check.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--artifacts", help="new artifact directory of the run (default artifacts/gpu-check/<time>)")
    parser.add_argument("--results", default=os.path.join(REPO, "benchmarks", "results"),
                        help="where gpu-<product>.md is written (default benchmarks/results)")
    parser.add_argument("--timings", type=_positive_int, default=7, help="timings of the reference per point")
    parser.add_argument("--warmup", type=_positive_int, default=3, help="untimed products before the timings")
    parser.add_argument("--flop-per-timing", type=_positive_float, default=2e13,
                        help="floating-point operations per reference timing (sets N; default 2e13)")
    parser.add_argument("--tolerance", type=_ratio, default=0.10,
                        help="largest |collection / reference - 1| that agrees (default 0.10)")
    parser.add_argument("--llm", choices=("auto", "vllm", "transformers", "none"), default="auto",
                        help="model server for the LLM load harness (auto: vLLM, else transformers serve, else skip)")
    parser.add_argument("--model", help="local model directory for the server (nothing is ever downloaded)")
    parser.add_argument("--llm-duration", type=_positive_float, default=5.0, help="seconds of load (default 5)")
    args = parser.parse_args(argv)
    if args.model is not None and not os.path.isdir(args.model):
        raise GpuCheckError("gpu-check: --model %s: not a directory; expected a local model directory "
                            "(nothing is downloaded)" % args.model)
    if args.artifacts is None:
        stamp = (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
        args.artifacts = os.path.join(REPO, "artifacts", "gpu-check", stamp)
    if os.path.lexists(args.artifacts) and (not os.path.isdir(args.artifacts) or os.listdir(args.artifacts)):
        raise GpuCheckError("gpu-check: --artifacts %s: exists and is not an empty directory; expected a new "
                            "directory (a run is never mixed with an earlier one)" % args.artifacts)
    if os.path.exists(args.results) and not os.path.isdir(args.results):
        raise GpuCheckError("gpu-check: --results %s: not a directory" % args.results)
    return args


# --------------------------------------------------------------------------
# the GPU


def import_torch():
    return importlib.import_module("torch")


def probe_gpu():
    """torch, when it sees a CUDA device; else :class:`NoGpu`."""
    try:
        torch = import_torch()
    except ImportError as exc:
        raise NoGpu("torch is not installed (%s); pip install -r requirements-torch.txt, with a CUDA build" % exc)
    if not torch.cuda.is_available():
        raise NoGpu("torch.cuda.is_available() is false (torch %s, built for CUDA %s)"
                    % (torch.__version__, torch.version.cuda or "none: a CPU-only build"))
    return torch


# --------------------------------------------------------------------------
# the reference: N back-to-back products between two CUDA events


def flop_per_product(size):
    """Floating-point operations of one n x n by n x n product: n^2 dot products of n multiply-adds."""
    return 2 * size ** 3


def products_per_timing(size, flop_budget, minimum=8, maximum=100_000):
    """N: enough products for ``flop_budget`` operations per timing (a timing then lasts tens of ms
    at a GPU's rates), at least ``minimum``."""
    return max(minimum, min(maximum, math.ceil(flop_budget / flop_per_product(size))))


def tflops(size, products, seconds):
    return flop_per_product(size) * products / seconds / 1e12


def time_reference(torch, size, dtype, timings, warmup, flop_budget):
    """The reference rate of one point: ``{tflops, products, timings, median_s, spread}``."""
    products = products_per_timing(size, flop_budget)
    kind = getattr(torch, dtype)
    a = torch.randn((size, size), device="cuda", dtype=kind)
    b = torch.randn((size, size), device="cuda", dtype=kind)
    c = torch.empty((size, size), device="cuda", dtype=kind)
    for _product in range(warmup):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    seconds = []
    for _timing in range(timings):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _product in range(products):
            torch.matmul(a, b, out=c)
        end.record()
        end.synchronize()
        seconds.append(start.elapsed_time(end) / 1e3)
    median = statistics.median(seconds)
    return {"tflops": tflops(size, products, median), "products": products, "timings": timings,
            "median_s": median, "spread": (max(seconds) - min(seconds)) / median}


# --------------------------------------------------------------------------
# the collection's run


def collection():
    """The collection's module_utils this tool reads with (imported when needed, from .venv/collections)."""
    if COLLECTIONS not in sys.path:
        sys.path.insert(0, COLLECTIONS)
    prefix = "ansible_collections.perfscale.topsail.plugins.module_utils."
    return argparse.Namespace(bounded_input=importlib.import_module(prefix + "bounded_input"),
                              gpu_peaks=importlib.import_module(prefix + "gpu_peaks"),
                              loading=importlib.import_module(prefix + "config.loading"))


def preset_points():
    """``(sizes, dtypes)`` of the gpu_matmul preset, read from the shipped configuration."""
    loading = collection().loading
    config = loading.resolve_config(loading.default_config_path(REPO), presets=[PRESET]).config
    factors = config["tests"]["benchmark"]["matrix"]["factors"]
    sizes, dtypes = factors["size"], factors["dtype"]
    sizes, dtypes = (sizes if isinstance(sizes, list) else [sizes]), (dtypes if isinstance(dtypes, list) else [dtypes])
    return [int(size) for size in sizes], [str(dtype) for dtype in dtypes]


def run_playbook(artifacts):
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "playbooks/benchmark.yml",
               "-e", "preset=%s" % PRESET, "-e", "artifact_dir=%s" % artifacts]
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    print("gpu-check: %s" % " ".join(command), flush=True)
    return command, subprocess.run(command, cwd=REPO, env=env, check=False).returncode


POINT_NAME = re.compile(r"\d{3}__matmul_(?P<dtype>[a-z0-9_]+)_(?P<size>\d+)")


def _one_line(text):
    return " ".join(str(text).split())[:300]


def collect_run(root):
    """What the run left: ``{"points": {(dtype, size): {...}}, "gpus": [...] or None, "environment": {...}}``.
    A point whose files cannot be read is recorded with its one-line error; the others are read."""
    bounded = collection().bounded_input
    names = sorted(os.listdir(root)) if os.path.isdir(root) else []
    environment = {}
    captures = [name for name in names if re.fullmatch(r"\d{3}__host__capture_environment", name)]
    if captures:
        try:
            environment = bounded.read_json_file(os.path.join(root, captures[-1], "environment.json"), root)
        except (bounded.InputError, OSError) as exc:
            environment = {"error": _one_line(exc)}
    points = {}
    matrices = [name for name in names if re.fullmatch(r"\d{3}__matbenchmarking", name)]
    for matrix in matrices[-1:]:
        for name in sorted(os.listdir(os.path.join(root, matrix))):
            match = POINT_NAME.fullmatch(name)
            if not match:
                continue
            key = (match["dtype"], int(match["size"]))
            directory = os.path.join(root, matrix, name)
            points[key] = _read_point(bounded, root, directory, name)
    gpus = environment.get("gpus") if isinstance(environment, dict) else None
    return {"points": points, "gpus": gpus if isinstance(gpus, list) else None,
            "environment": environment if isinstance(environment, dict) else {}}


def _read_point(bounded, root, directory, name):
    output = os.path.join(directory, "output.json")
    if not os.path.exists(output):
        failure = os.path.join(directory, "FAILURE")
        try:
            reason = bounded.read_text(failure, root, 65536).splitlines()[0] if os.path.exists(failure) \
                else "no output.json (the point did not run to its end)"
        except (bounded.InputError, OSError, IndexError) as exc:
            reason = "FAILURE unreadable: %s" % exc
        return {"point": name, "error": _one_line(reason)}
    try:
        document = bounded.read_json_file(output, root)
        result, env = document["@result"], document.get("environment") or {}
        rate = result["rate"]
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or rate <= 0:
            raise ValueError("@result.rate is %r, expected a positive number (GFLOP/s)" % (rate,))
        return {"point": name, "error": None, "rate_gflops": float(rate), "device_name": env.get("device_name"),
                "torch": env.get("torch"), "cuda": env.get("cuda"), "reps_per_batch": result.get("reps_per_batch"),
                "time_cv": result.get("time_cv")}
    except (bounded.InputError, OSError, KeyError, TypeError, ValueError) as exc:
        return {"point": name, "error": _one_line("output.json: %s" % exc)}


# --------------------------------------------------------------------------
# the LLM load harness against a local server


def decide_llm(choice, model, find_spec=importlib.util.find_spec):
    """``(backend, model or None, None)`` to run, or ``(None, None, why not)``; a choice that cannot be
    honoured is a :class:`GpuCheckError` (one line, status 2)."""
    have_vllm = find_spec("vllm") is not None
    have_transformers = all(find_spec(name) is not None for name in TRANSFORMERS_SERVE_NEEDS)
    if choice == "none":
        return None, None, "LLM load: skipped (--llm none)"
    if choice == "vllm" and not have_vllm:
        raise GpuCheckError("gpu-check: --llm vllm: vLLM is not installed (pip install vllm)")
    if choice == "vllm" and model is None:
        raise GpuCheckError("gpu-check: --llm vllm needs --model PATH, a local model directory (nothing is downloaded)")
    if choice == "transformers" and not have_transformers:
        raise GpuCheckError("gpu-check: --llm transformers: transformers serve is not installed "
                            "(pip install -r requirements-test-server.txt)")
    if choice in ("auto", "vllm") and have_vllm and model is not None:
        return "vllm", model, None
    if choice in ("auto", "transformers") and have_transformers:
        return "transformers", model, None
    if have_vllm:
        return None, None, ("LLM load: skipped: vLLM is installed but needs a model: pass --model PATH, a local "
                            "model directory (nothing is downloaded)")
    return None, None, "LLM load: skipped: neither vLLM nor transformers serve is installed"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_command(backend, model, port, model_dir):
    """``(command, model name the server answers to, what runs where)``."""
    if backend == "vllm":
        return ([sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--host", "127.0.0.1",
                 "--port", str(port)], model, "vLLM, model %s, on the GPU" % model)
    if model is not None:
        return ([sys.executable, "-m", "transformers.cli.transformers", "serve", model, "--host", "127.0.0.1",
                 "--port", str(port), "--device", "cuda", "--continuous-batching"], model,
                "transformers serve, model %s, on the GPU" % model)
    return ([sys.executable, TINY_SERVER, model_dir, "--port", str(port)], model_dir,
            "transformers serve, a tiny random-weight Llama built offline (tests/transformers_server.py), on the "
            "CPU: it exercises the harness, not the GPU")


def run_llm(backend, model, artifacts, duration):
    """Serve, load for ``duration`` seconds, stop the server: ``{backend, where, summary}`` or ``{skipped}``."""
    port = free_port()
    model_dir = os.path.join(artifacts, "llm_model")
    command, served, where = server_command(backend, model, port, model_dir)
    log_path = os.path.join(artifacts, "llm_server.log")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    url = "http://127.0.0.1:%d" % port
    with open(log_path, "w", encoding="utf-8") as log:
        server = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 900
        while not _healthy(url):
            if server.poll() is not None or time.monotonic() > deadline:
                return {"skipped": "LLM load: the server did not start (exit %s); see %s" % (server.poll(), log_path),
                        "where": where}
            time.sleep(1)
        harness = [sys.executable, "-m", HARNESS, "--url", url, "--model", served, "--load", "concurrency",
                   "--concurrency", "2", "--duration", "%g" % duration, "--warmup", "1", "--prompt-tokens", "64",
                   "--output-tokens", "32", "--output", os.path.join(artifacts, "llm_load"), "--server-name", backend]
        done = subprocess.run(harness, cwd=REPO, capture_output=True, text=True, check=False,
                              env=dict(os.environ, PYTHONPATH=COLLECTIONS))
        bounded = collection().bounded_input
        try:
            document = bounded.load_json(done.stdout, "the LLM load harness's stdout")
            result = document.get("@result") or {}
            if not isinstance(result, dict):
                raise bounded.InputError("@result is not an object")
        except (bounded.InputError, AttributeError) as exc:
            tail = _one_line(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else exc)
            return {"skipped": "LLM load: the harness exited %d without its document: %s" % (done.returncode, tail),
                    "where": where}
        return {"backend": backend, "where": where, "exit_status": done.returncode,
                "summary": {key: result.get(key) for key in LLM_KEYS}}
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _healthy(url):
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False


# --------------------------------------------------------------------------
# the report


def product_slug(name):
    """``NVIDIA H100 80GB HBM3`` -> ``nvidia-h100-80gb-hbm3``."""
    slug = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")
    return slug or "unknown-gpu"


def compare(collected, reference, product, sizes, dtypes, tolerance, gpu_peaks):
    """One row per size and dtype of the preset: both rates, their ratio and agreement, the peak."""
    rows = []
    for dtype in dtypes:
        for size in sizes:
            point = collected.get((dtype, size)) or {"error": "no point directory in the run"}
            ref = reference.get((dtype, size)) or {}
            row = {"size": size, "dtype": dtype, "collection_tflops": None, "reference_tflops": ref.get("tflops"),
                   "ratio": None, "agree": False, "peak_tflops": None, "collection_pct": None, "reference_pct": None,
                   "peak_note": None, "error": point.get("error") or ref.get("error")}
            if point.get("rate_gflops") is not None:
                row["collection_tflops"] = point["rate_gflops"] / 1e3
            if row["collection_tflops"] and row["reference_tflops"]:
                row["ratio"] = row["collection_tflops"] / row["reference_tflops"]
                row["agree"] = abs(row["ratio"] - 1) <= tolerance
            entry, reason = gpu_peaks.peak(product, dtype)
            if entry is None:
                row["peak_note"] = reason
            else:
                row["peak_tflops"] = entry["tflops"]
                row["peak_note"] = gpu_peaks.unconfirmed_note(entry)
                for key, rate in (("collection_pct", row["collection_tflops"]),
                                  ("reference_pct", row["reference_tflops"])):
                    row[key] = 100 * rate / entry["tflops"] if rate else None
            rows.append(row)
    return rows


def _number(value, fmt="%.1f"):
    return "n/a" if value is None else fmt % value


def _cell(value):
    """A value from the run's files as one table cell: one line, no column separator."""
    return "n/a" if value is None else _one_line(value).replace("|", "/")


def _field(gpu, paths):
    values = []
    for path in paths:
        value = gpu
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        values.append(_cell(value))
    return " / ".join(values)


def render_report(result):
    """The Markdown report of one check (a pure function of ``result``)."""
    lines = ["# GPU check: %s" % _cell(result["product"]), "",
             "Recorded by `make gpu-check` (tools/gpu_check.py) on %s. The collection's numbers come from "
             "`ansible-playbook playbooks/benchmark.yml -e preset=%s` (artifacts: `%s`, exit status %s); the "
             "reference is the loop-GEMM of tools/gpu_check.py: %d warm-up products, then %d timings of N "
             "back-to-back `torch.matmul(a, b, out=c)` between two CUDA events (N for about %.0e floating-point "
             "operations per timing, at least 8), the median timing; TF32 for float32 products: %s."
             % (result["date"], PRESET, result["artifacts"], result["playbook_status"],
                result["reference"]["warmup"], result["reference"]["timings"], result["reference"]["flop_per_timing"],
                "allowed" if result["tf32_allowed"] else "not allowed (torch's default)"), ""]
    peak_product = result.get("peak_product")
    lines += ["## Matmul: the collection against the reference", "",
              "Peak: the dense datasheet figure of %s (plugins/module_utils/gpu_peaks.py). Agreement: the "
              "collection's rate / the reference's, within %.0f %%." % (peak_product or "no product of the peak "
                                                                       "table", 100 * result["tolerance"]), "",
              "| size | dtype | collection TFLOP/s | reference TFLOP/s | ratio | agreement | peak TFLOP/s "
              "| collection % of peak | reference % of peak | note |",
              "|---:|---|---:|---:|---:|---|---:|---:|---:|---|"]
    for row in result["rows"]:
        agreement = "agrees" if row["agree"] else ("DISAGREES" if row["ratio"] is not None else "n/a")
        note = "; ".join(_cell(text) for text in (row["error"], row["peak_note"]) if text)
        lines.append("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            row["size"], row["dtype"], _number(row["collection_tflops"]), _number(row["reference_tflops"]),
            _number(row["ratio"], "%.3f"), agreement, _number(row["peak_tflops"], "%g"),
            _number(row["collection_pct"]), _number(row["reference_pct"]), note))
    lines += ["", "## GPU inventory (nvidia-smi -q -x, as capture_environment types it)", ""]
    gpus = result.get("gpus")
    if not gpus:
        lines.append("No inventory was captured%s." % (": %s" % result["inventory_error"]
                                                        if result.get("inventory_error") else ""))
    else:
        lines += ["| field | " + " | ".join("GPU %d" % index for index in range(len(gpus))) + " |",
                  "|---|" + "---|" * len(gpus)]
        for label, *paths in INVENTORY_FIELDS:
            lines.append("| %s | %s |" % (label, " | ".join(_field(gpu, paths) for gpu in gpus)))
    lines += ["", "## LLM load harness", ""]
    llm = result["llm"]
    if llm.get("skipped"):
        lines.append(llm["skipped"] + (" (%s)" % llm["where"] if llm.get("where") else ""))
    else:
        lines += ["Server: %s; harness exit status %s; concurrency 2 for %g s, 64 prompt tokens, 32 output tokens."
                  % (llm["where"], llm["exit_status"], result["llm_duration"]), "", "| metric | value |", "|---|---:|"]
        lines += ["| %s | %s |" % (key, ("%.3g" % value) if isinstance(value, float) else _cell(value))
                  for key, value in llm["summary"].items()]
    versions = result["versions"]
    lines += ["", "## Versions", "", "| component | version |", "|---|---|"]
    lines += ["| %s | %s |" % (name, _cell(versions.get(name)))
              for name in ("NVIDIA driver", "CUDA (driver)", "CUDA (torch)", "torch", "Python", "collection",
                           "collection commit")]
    return "\n".join(lines) + "\n"


def write_report(directory, product, text):
    """``<directory>/gpu-<slug>.md``, written whole (a temporary name, then renamed) with the umask's mode."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "gpu-%s.md" % product_slug(product))
    temporary = "%s.tmp.%d" % (path, os.getpid())
    try:
        with open(temporary, "x", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return path


def versions_of(torch, gpus, environment):
    first = gpus[0] if gpus else {}
    collection_info = environment.get("collection") if isinstance(environment.get("collection"), dict) else {}
    return {"NVIDIA driver": first.get("driver_version"), "CUDA (driver)": first.get("cuda_version"),
            "CUDA (torch)": torch.version.cuda, "torch": torch.__version__, "Python": platform.python_version(),
            "collection": collection_info.get("version"), "collection commit": collection_info.get("git_commit")}


# --------------------------------------------------------------------------


def check(args, torch):
    """The whole check once a GPU is there; returns the exit status."""
    modules = collection()
    sizes, dtypes = preset_points()
    backend, model, skipped = decide_llm(args.llm, args.model)
    os.makedirs(args.artifacts, exist_ok=True)
    _command, status = run_playbook(args.artifacts)
    run = collect_run(args.artifacts)
    reference = {}
    for dtype in dtypes:
        for size in sizes:
            try:
                reference[(dtype, size)] = time_reference(torch, size, dtype, args.timings, args.warmup,
                                                          args.flop_per_timing)
            except RuntimeError as exc:          # CUDA out of memory, a dtype the GPU lacks: that point only
                reference[(dtype, size)] = {"error": _one_line("reference: %s" % exc)}
            print("gpu-check: reference %s %d: %s TFLOP/s" % (dtype, size, _number(reference[(dtype, size)]
                                                                                 .get("tflops"))), flush=True)
    llm = {"skipped": skipped} if backend is None else run_llm(backend, model, args.artifacts, args.llm_duration)
    names = [point.get("device_name") for point in run["points"].values() if point.get("device_name")]
    gpus = run["gpus"] or []
    product = names[0] if names else (gpus[0].get("product_name") if gpus else None) or torch.cuda.get_device_name()
    rows = compare(run["points"], reference, product, sizes, dtypes, args.tolerance, modules.gpu_peaks)
    result = {"product": product, "peak_product": modules.gpu_peaks.match_product(product),
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "artifacts": args.artifacts, "playbook_status": status, "tolerance": args.tolerance,
              "tf32_allowed": bool(torch.backends.cuda.matmul.allow_tf32), "rows": rows, "gpus": gpus,
              "inventory_error": run["environment"].get("error"), "llm": llm, "llm_duration": args.llm_duration,
              "reference": {"timings": args.timings, "warmup": args.warmup, "flop_per_timing": args.flop_per_timing},
              "versions": versions_of(torch, gpus, run["environment"])}
    path = write_report(args.results, product, render_report(result))
    disagreements = [row for row in rows if not row["agree"]]
    print("gpu-check: %s written; %d of %d points agree within %.0f %%; playbook exit status %d; %s"
          % (path, len(rows) - len(disagreements), len(rows), 100 * args.tolerance, status,
             llm.get("skipped") or "LLM load: %s" % llm["where"]))
    return EXIT_OK if status == 0 and not disagreements else EXIT_CHECK_FAILED


def main(argv=None):
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        torch = probe_gpu()
        return check(args, torch)
    except GpuCheckError as exc:
        print(str(exc), file=sys.stderr)
        return exc.status


if __name__ == "__main__":
    sys.exit(main())
