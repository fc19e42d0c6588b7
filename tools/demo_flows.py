"""``make demo-flows``: the fine_tuning and llm_serving flows end to end on a simulated cluster.

Starts, on 127.0.0.1 only and stopped at the end:
  - an OpenAI-compatible model server (tests/fake_openai.py) standing for the vLLM that KServe
    would run: the InferenceServices' status.url points at it, so llm_load loads it;
  - kubesim (python -m kubesim, OpenShift profile, 20x time) simulating every pod (no local
    process runs a pod's command) with the image behaviours below: the fine-tuning image's
    pods write a trainer summary, as fms-hf-tuning does; the vLLM runtime crashes once before
    it loads (kubesim's crash-once behaviour), so each InferenceService shows KServe's
    BlockedByFailedLoad, then Loaded after the kubelet's restart (the deploy waits it through);
then runs, as a user would:
    ansible-playbook playbooks/fine_tuning.yml -e preset=fine_tuning_smoke
    ansible-playbook playbooks/llm_serving.yml -e preset=llm_serving_smoke
each into its own artifact directory under ARTIFACTS (default artifacts/demo-flows/<time>), and
prints where they are. FLOWS=fine_tuning (or llm_serving) runs one of them; extra arguments go to
the playbooks (e.g. -e '{"overrides": {...}}'). The exit status is the first failing playbook's.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)

# what the pods of an image do on kubesim (kubesim/behaviours.py): the trainer's summary line
IMAGE_BEHAVIOURS = [
    {"image": "quay.io/modh/fms-hf-tuning:*",
     "annotations": {"kubesim.perfscale.io/trainer-summary": json.dumps(
         {"train_runtime": 321.5, "train_samples_per_second": 12.4, "train_steps_per_second": 0.78,
          "train_loss": 1.21, "epoch": 1.0}), "kubesim.perfscale.io/duration-s": "3"}},
    {"image": "quay.io/modh/vllm:*", "behaviour": "crash-once"},
]
FLOWS = (("fine_tuning", "fine_tuning_smoke"), ("llm_serving", "llm_serving_smoke"))


def flows():
    """The flows to run: all, or those FLOWS names (comma-separated)."""
    wanted = [name for name in os.environ.get("FLOWS", "").split(",") if name]
    unknown = sorted(set(wanted) - {name for name, _preset in FLOWS})
    if unknown:
        known = ", ".join(name for name, _preset in FLOWS)
        raise SystemExit("demo-flows: FLOWS=%s: expected some of %s" % (",".join(unknown), known))
    return [(name, preset) for name, preset in FLOWS if not wanted or name in wanted]


def model_name():
    """The model llm_serving deploys (the configuration's), which the model server answers as."""
    sys.path.insert(0, os.path.join(REPO, ".venv", "collections"))
    from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading

    config = loading.resolve_config(loading.default_config_path(REPO), presets=["llm_serving"]).config
    return config["tests"]["llm_serving"]["model"]["name"]


def start(command, first_line_prefix, what):
    """A child process whose first line of output starts with ``first_line_prefix``: (process, that line)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=REPO)
    line = process.stdout.readline()
    if not line.startswith(first_line_prefix):
        stop(process)
        raise SystemExit("demo-flows: %s did not start (%s)" % (what, line.strip() or "exit %s" % process.poll()))
    return process, line.strip()


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main(argv=None):
    extra = list(sys.argv[1:] if argv is None else argv)
    selected = flows()
    root = os.environ.get("ARTIFACTS") or os.path.join(REPO, "artifacts", "demo-flows", time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(root, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="demo-flows-") as work:
        behaviours = os.path.join(work, "image_behaviours.json")
        with open(behaviours, "w", encoding="utf-8") as handle:
            json.dump(IMAGE_BEHAVIOURS, handle)
        server, line = start([sys.executable, os.path.join(REPO, "tests", "fake_openai.py"), "--port", "0",
                              "--ttft-ms", "20", "--itl-ms", "2", "--model", model_name()], "PORT ", "the model server")
        url = "http://127.0.0.1:%s" % line.split()[1]
        try:
            sim, line = start([sys.executable, "-m", "kubesim", "--state-dir", os.path.join(work, "kubesim"),
                               "--profile", "openshift", "--time-scale", "20", "--pod-start-delay", "0.1",
                               "--no-run-local-pods", "--image-behaviours", behaviours, "--inference-url", url],
                              "export KUBECONFIG=", "kubesim")
            kubeconfig = line.split("=", 1)[1]
            print("demo-flows: kubesim is up (KUBECONFIG=%s), the model server answers at %s" % (kubeconfig, url),
                  flush=True)
            try:
                status = 0
                for flow, preset in selected:
                    directory = os.path.join(root, flow)
                    print("demo-flows: %s -e preset=%s -> %s" % (flow, preset, directory), flush=True)
                    code = subprocess.call(
                        [os.path.join(BIN, "ansible-playbook"), os.path.join(REPO, "playbooks", flow + ".yml"),
                         "-e", "preset=%s" % preset, "-e", "artifact_dir=%s" % directory] + extra,
                        cwd=REPO, env=dict(os.environ, KUBECONFIG=kubeconfig))
                    status = status or code
                for flow, _preset in selected:
                    print("demo-flows: %s artifacts: %s" % (flow, os.path.join(root, flow)))
                return status
            finally:
                stop(sim)
        finally:
            stop(server)


if __name__ == "__main__":
    sys.exit(main())
