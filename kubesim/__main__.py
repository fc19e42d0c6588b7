"""``python -m kubesim``: run the simulated cluster in the foreground until SIGINT/SIGTERM."""

import argparse
import logging
import signal
import sys
import threading

from kubesim.app import KubeSim, Settings
from kubesim.profiles import PROFILES


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kubesim", description="A simulated Kubernetes API server for tests.")
    parser.add_argument("--profile", choices=PROFILES, default="vanilla")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one, or the "
                                                           "previous one of --state-dir)")
    parser.add_argument("--state-dir", help="keep certificates, tokens, kubeconfig and a state snapshot here "
                                            "(reloaded at start, written at shutdown)")
    parser.add_argument("--time-scale", type=float, default=1.0, help="simulated seconds per real second")
    parser.add_argument("--user-namespace", action="append", dest="user_namespaces",
                        help="a namespace with its own limited token (repeatable; default team-a)")
    parser.add_argument("--run-local-pods", action=argparse.BooleanOptionalAction, default=True,
                        help="run the commands of Jobs' pods as local processes (default; --no-run-local-pods: "
                             "simulate every pod)")
    parser.add_argument("--run-local-scope", choices=("jobs", "all"), default="jobs",
                        help="which pods with a command run locally: those of batch/v1 Jobs (default) or all")
    parser.add_argument("--max-local-pods", type=int, default=None,
                        help="local processes at once (default: twice the CPUs, at least 4)")
    parser.add_argument("--pod-start-delay", type=float, default=0.5, help="simulated seconds before a pod runs")
    parser.add_argument("--disable-controller", action="append", default=[], dest="disabled_controllers")
    parser.add_argument("--no-transient", action="append", default=[], dest="disabled_transients", metavar="NAME",
                        help="do not simulate a transient state a real rollout shows (repeatable; names in "
                             "docs/kubesim.md, 'Upstream sources')")
    parser.add_argument("--addon", action="append", default=[], dest="addons",
                        help="an API bundle on top of the profile's (repeatable; see docs/kubesim.md)")
    parser.add_argument("--catalog-dir", action="append", default=[], dest="catalog_dirs",
                        help="a folder of extra OLM catalog fixtures (repeatable)")
    parser.add_argument("--inference-url", help="default status.url of InferenceServices and LLMInferenceServices")
    parser.add_argument("--image-behaviours", metavar="FILE",
                        help="YAML list of {image: glob, behaviour: crash-once|crash-loop|slow-storage, annotations: {...}}: "
                             "what pods of an image do (kubesim.behaviours)")
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser.parse_args(argv)


def _image_behaviours(path):
    if not path:
        return ()
    import yaml

    with open(path, encoding="utf-8") as handle:
        rules = yaml.safe_load(handle) or []
    if not isinstance(rules, list) or not all(isinstance(r, dict) and "image" in r for r in rules):
        raise SystemExit("--image-behaviours %s: expected a YAML list of {image: glob, annotations: {...}}" % path)
    from kubesim.behaviours import behaviour_annotations
    for rule in rules:
        if rule.get("behaviour") is not None:
            try:
                behaviour_annotations(rule["behaviour"])
            except ValueError as exc:
                raise SystemExit("--image-behaviours %s: %s" % (path, exc)) from None
    return rules


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="kubesim %(levelname)s %(name)s: %(message)s")
    settings = Settings(profile=args.profile, port=args.port, state_dir=args.state_dir, time_scale=args.time_scale,
                        user_namespaces=args.user_namespaces or ("team-a",), run_local_pods=args.run_local_pods,
                        run_local_scope=args.run_local_scope, max_local_pods=args.max_local_pods,
                        pod_start_delay=args.pod_start_delay, disabled_controllers=args.disabled_controllers,
                        addons=args.addons, catalog_dirs=args.catalog_dirs, inference_url=args.inference_url,
                        image_behaviours=_image_behaviours(args.image_behaviours),
                        disabled_transients=args.disabled_transients)
    sim = KubeSim(settings)
    try:
        sim.check_settings()
    except ValueError as exc:
        raise SystemExit("kubesim: %s" % exc) from None
    done = threading.Event()

    def on_signal(signum, frame):
        done.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    sim.start()
    print("kubesim %s on %s (profile %s)" % (sim.version_info()["gitVersion"], sim.url, settings.profile), file=sys.stderr)
    print("export KUBECONFIG=%s" % sim.kubeconfig, flush=True)
    try:
        while not done.wait(0.5):
            pass
    finally:
        sim.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
