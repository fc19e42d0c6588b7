# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Command line of the LLM load harness.

It writes into ``--output DIR``: ``benchmark_report_stage_<i>.json`` (llm-d benchmark
report v0.2.1, one per stage), ``requests.jsonl`` (one record per request, warm-up
included and flagged) and ``result.json``; it prints the same document as
``result.json`` on stdout (the collection's harness contract: ``name``,
``framework``, ``@parameters``, ``@result``) and free text on stderr.

Exit status: 0 when at least one measured request succeeded; 2 for a usage or
configuration error; 3 when the target cannot be used at start (wrong URL, refused
connection, TLS failure, HTTP 401/403/404), with one line on stderr; 4 when the run
went through but no measured request succeeded (files and stdout still written).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import socket
import sys
import time
import uuid

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import (
    HARNESS_NAME,
    HARNESS_VERSION,
)
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import api
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import arrivals as arrivals_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import config as config_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import failfast
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import metrics
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import orchestrate
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import preflight as preflight_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import report as report_lib
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.distributions import (
    DistributionError,
    parse_length,
)
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.runner import StartError

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_START = 3
EXIT_NO_SUCCESS = 4

REQUESTS_FILE = "requests.jsonl"
RESULT_FILE = "result.json"
REPORT_PATTERN = "benchmark_report_stage_%d.json"


def add_toggle(group, name, default, text):
    """``--NAME`` / ``--no-NAME`` (argparse's BooleanOptionalAction needs Python 3.9)."""
    dest = name.replace("-", "_")
    group.add_argument("--" + name, dest=dest, action="store_true", default=default,
                       help="%s (default: %s; --no-%s to turn off)" % (text, "yes" if default else "no", name))
    group.add_argument("--no-" + name, dest=dest, action="store_false", help=argparse.SUPPRESS)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="llm_load", description="Load an OpenAI-compatible server; latencies from the scheduled send time.",
        epilog="Definitions of every number: docs/llm-load.md of perfscale.topsail.")
    target = parser.add_argument_group("target")
    target.add_argument("--url", required=True, help="base URL, e.g. http://127.0.0.1:8000 (the API path is added)")
    target.add_argument("--model", required=True, help="model name sent in every request")
    target.add_argument("--endpoint", choices=sorted(api.ENDPOINTS), default="completions")
    add_toggle(target, "stream", True, "stream the responses (server-sent events; TTFT and ITL need it)")
    target.add_argument("--ca-file", help="CA bundle (PEM) to verify the server's certificate")
    target.add_argument("--insecure", action="store_true", help="do not verify the server's certificate")
    target.add_argument("--token-file", help="file holding a bearer token (sent as Authorization: Bearer)")
    target.add_argument("--request-timeout", type=float, default=600.0, help="seconds per request (default 600)")
    target.add_argument("--ignore-eos", nargs="?", const="true", default="auto", choices=preflight_lib.IGNORE_EOS_MODES,
                        help="send vLLM's ignore_eos: true so that the server generates exactly max_tokens: auto "
                             "(default) drops it when the preflight says the server does not accept it, true fails "
                             "then, false never sends it (--ignore-eos alone: true)")
    target.add_argument("--no-ignore-eos", dest="ignore_eos", action="store_const", const="false",
                        help=argparse.SUPPRESS)
    target.add_argument("--extra-body", help="JSON object merged into every request body (e.g. '{\"temperature\": 0}')")
    target.add_argument("--server-name", help="label of the server (vllm, kserve, llm-d...) for the report")
    target.add_argument("--server-version", help="server version for the report (default: asked from GET /version)")
    target.add_argument("--no-preflight", dest="preflight", action="store_false",
                        help="skip the start check (one request with max_tokens 1, and GET /version)")

    load = parser.add_argument_group("load (one stage; --stages FILE for several)")
    load.add_argument("--load", choices=arrivals_lib.known_loads(), default="constant")
    load.add_argument("--rate", type=float, help="requests per second (constant, poisson)")
    load.add_argument("--concurrency", type=int, help="requests in flight (concurrency; the sweep's probe)")
    load.add_argument("--duration", type=float, help="seconds of measurement per stage (after the warm-up)")
    load.add_argument("--max-requests", type=int, help="measured requests per stage")
    load.add_argument("--warmup", type=float, default=0.0, help="seconds of warm-up per stage (sent, not measured)")
    load.add_argument("--warmup-requests", type=int, default=0, help="warm-up as a number of requests instead")
    load.add_argument("--sweep-steps", type=int, default=4, help="rates of a sweep below its probe (default 4)")
    load.add_argument("--trace", help="JSONL trace for --load trace: timestamp, input_tokens, output_tokens")
    load.add_argument("--trace-time-scale", type=float, default=1.0, help="multiply trace timestamps (0.5: twice as fast)")
    load.add_argument("--stages", help="YAML or JSON list of stages (keys: %s)" % ", ".join(config_lib.STAGE_KEYS))
    load.add_argument("--workers", type=int, default=1, help="processes sharing the schedule (default 1)")
    load.add_argument("--max-in-flight", type=int, default=10000, help="cap on outstanding requests per process")
    load.add_argument("--stop-after-failures", type=int, default=failfast.DEFAULT_LIMIT,
                      help="stop the run after N failures in a row of one error class with no success yet "
                           "(default %d; 0: never)" % failfast.DEFAULT_LIMIT)
    load.add_argument("--client-bound-p99-ms", type=float, default=5.0,
                      help="send-lag p99 above which a stage is flagged client-bound (default 5 ms)")

    data = parser.add_argument_group("data")
    data.add_argument("--prompt-tokens", default="128", help="input length: N, uniform:A,B, normal:MEAN,SD...")
    data.add_argument("--output-tokens", default="128", help="output length (max_tokens), same forms")
    data.add_argument("--prefix-tokens", type=int, default=0, help="shared prefix length (prefix-cache tests)")
    data.add_argument("--prefix-groups", type=int, default=0, help="number of distinct shared prefixes")
    data.add_argument("--prompt-file", help="JSONL prompts: {\"prompt\": ...} or {\"messages\": [...]}")
    data.add_argument("--tokenizer", help="local tokenizer (tokenizer.json or a directory); default: word estimate")
    data.add_argument("--seed", type=int, default=0)

    out = parser.add_argument_group("output")
    out.add_argument("--output", required=True, metavar="DIR", help="directory for the reports and request records")
    out.add_argument("--run-id", help="experiment id shared by the stages' reports (default: a new uuid)")
    out.add_argument("--description", help="run description for the reports")
    out.add_argument("--no-chunk-gaps", dest="chunk_gaps", action="store_false",
                     help="leave the inter-chunk gaps out of requests.jsonl (smaller file)")
    return parser


def _option_table():
    """``({dest: argparse action}, {dests that have a --no- form})`` from one parser (``--output`` excluded)."""
    options, negatable = {}, set()
    for action in build_parser()._actions:  # pylint: disable=protected-access
        if action.option_strings and action.dest not in ("help", "output"):
            options.setdefault(action.dest, action)
            if "--no-" + action.dest.replace("_", "-") in action.option_strings:
                negatable.add(action.dest)
    return options, negatable


def option_actions():
    """``{dest: argparse action}`` of every option a setting may give (``--output`` excluded)."""
    return _option_table()[0]


def command_from_settings(settings, output_dir, python=None):
    """argv running the harness from a mapping of its options (a matrix point's settings):
    ``{"rate": 10, "stream": False, "token_file": PATH}`` -> ``[..., "--rate", "10", "--no-stream", ...]``.
    Unknown keys are a ConfigError listing the known ones; ``None`` values are left out."""
    options, negatable = _option_table()
    unknown = sorted(set(settings) - set(options))
    if unknown:
        raise config_lib.ConfigError("llm_load has no option %s; its options: %s"
                                     % (", ".join(unknown), ", ".join(sorted(options))))
    argv = [python or sys.executable, "-m", __name__.rsplit(".", 1)[0]]
    for key, value in sorted(settings.items()):
        if value is None:
            continue
        flag = "--" + key.replace("_", "-")
        choices = options[key].choices
        if choices and (str(value).lower() if isinstance(value, bool) else value) not in choices:
            raise config_lib.ConfigError("llm_load option %s: expected one of %s, got %r"
                                         % (key, ", ".join(str(c) for c in choices), value))
        if isinstance(options[key], (argparse._StoreTrueAction, argparse._StoreFalseAction)):  # pylint: disable=protected-access
            if value:
                argv.append(flag)
            elif key in negatable:
                argv.append("--no-" + key.replace("_", "-"))
            # a plain switch (--insecure) set to false is its default: nothing to say
        elif isinstance(value, bool):      # a switch with values (--ignore-eos auto|true|false)
            argv += [flag, "true" if value else "false"]
        elif isinstance(value, (dict, list)):
            argv += [flag, json.dumps(value)]
        else:
            argv += [flag, str(value)]
    return argv + ["--output", output_dir]


def stages_from_options(options):
    known = arrivals_lib.known_loads()
    if options.stages:
        raw_stages = config_lib.read_stages_file(options.stages)
        return [config_lib.validate_stage(raw, index, known) for index, raw in enumerate(raw_stages)]
    raw = {"load": options.load, "rate": options.rate, "concurrency": options.concurrency, "duration": options.duration,
           "max_requests": options.max_requests, "warmup": options.warmup, "warmup_requests": options.warmup_requests,
           "trace": options.trace, "time_scale": options.trace_time_scale,
           "sweep_steps": options.sweep_steps if options.load == "sweep" else None}
    return [config_lib.validate_stage({k: v for k, v in raw.items() if v is not None}, 0, known)]


def spec_from_options(options):
    if options.workers < 1:
        raise config_lib.ConfigError("--workers must be >= 1, got %d" % options.workers)
    if options.request_timeout <= 0:
        raise config_lib.ConfigError("--request-timeout must be > 0")
    if options.stop_after_failures < 0:
        raise config_lib.ConfigError("--stop-after-failures must be >= 0 (0: never stop), got %d"
                                     % options.stop_after_failures)
    if (options.prefix_tokens > 0) != (options.prefix_groups > 0):
        raise config_lib.ConfigError("--prefix-tokens and --prefix-groups go together (both > 0)")
    if options.prompt_file and options.prefix_groups:
        raise config_lib.ConfigError("--prefix-groups applies to synthetic prompts, not to --prompt-file")
    extra = None
    if options.extra_body:
        try:
            extra = json.loads(options.extra_body)
        except ValueError as exc:
            raise config_lib.ConfigError("--extra-body is not JSON (%s)" % exc) from None
        if not isinstance(extra, dict):
            raise config_lib.ConfigError("--extra-body must be a JSON object")
    for value, what in ((options.prompt_tokens, "--prompt-tokens"), (options.output_tokens, "--output-tokens")):
        parse_length(value, what)
    for path, what in ((options.prompt_file, "--prompt-file"), (options.token_file, "--token-file")):
        if path and not os.path.isfile(path):
            raise config_lib.ConfigError("%s %s does not exist" % (what, path))
    return {
        "url": options.url, "model": options.model, "endpoint": options.endpoint, "stream": options.stream,
        "token_file": os.path.abspath(options.token_file) if options.token_file else None,
        "ca_file": os.path.abspath(options.ca_file) if options.ca_file else None, "insecure": options.insecure,
        "extra_body": extra, "ignore_eos": options.ignore_eos, "request_timeout": options.request_timeout,
        "stop_after_failures": options.stop_after_failures,
        "max_in_flight": options.max_in_flight, "seed": options.seed, "prompt_tokens": options.prompt_tokens,
        "output_tokens": options.output_tokens, "prefix_tokens": options.prefix_tokens,
        "prefix_groups": options.prefix_groups,
        "prompt_file": os.path.abspath(options.prompt_file) if options.prompt_file else None,
        "tokenizer": options.tokenizer, "client_bound_p99_ms": options.client_bound_p99_ms,
        "server_version": options.server_version,
        "request_id_prefix": "%s-" % options.run_id[:8] if options.run_id else "",
    }


def parameters(options, spec, stages, target_display):
    """``@parameters``: the run as asked (no secret: the token file's path only)."""
    return {
        "url": target_display, "model": options.model, "endpoint": options.endpoint, "stream": options.stream,
        "load": options.load if not options.stages else None, "rate": options.rate, "concurrency": options.concurrency,
        "duration": options.duration, "max_requests": options.max_requests, "warmup": options.warmup,
        "warmup_requests": options.warmup_requests, "sweep_steps": options.sweep_steps if options.load == "sweep" else None,
        "trace": options.trace, "stages_file": options.stages, "stage_plan": [s.as_dict() for s in stages],
        "prompt_tokens": options.prompt_tokens, "output_tokens": options.output_tokens,
        "prefix_tokens": options.prefix_tokens, "prefix_groups": options.prefix_groups,
        "prompt_file": options.prompt_file, "tokenizer": options.tokenizer, "seed": options.seed,
        "workers": options.workers, "client_bound_p99_ms": options.client_bound_p99_ms,
        "request_timeout": options.request_timeout, "max_in_flight": options.max_in_flight,
        "ignore_eos": options.ignore_eos, "stop_after_failures": options.stop_after_failures,
        "extra_body": spec["extra_body"], "tls_verify": not options.insecure,
        "ca_file": options.ca_file, "token_file": options.token_file, "server_name": options.server_name,
        "harness_version": HARNESS_VERSION,
    }


def _data_section(prompts, spec):
    document = {"source": prompts.source, "input_seq_len": prompts.input_tokens.as_sequence_length(),
                "output_seq_len": prompts.output_tokens.as_sequence_length(), "native": prompts.describe()}
    if spec.get("prefix_groups"):
        document["prefix"] = {"prefix_len": {"distribution": "fixed", "value": spec["prefix_tokens"]},
                              "num_groups": spec["prefix_groups"], "num_users_per_group": 1, "num_prefixes": 1}
    return document


# why a headline value is null when its metric family has no reason of its own (first match wins)
NULL_REASONS_BY_KEY = (
    (lambda key: key == "rate_error", lambda summary: "no requested rate, or no achieved rate"),
    (lambda key: key == "client_cpu_utilization", lambda summary: "the stage had no duration"),
    (lambda key: key.startswith(("input_tokens", "output_tokens")), lambda summary: "no successful request"),
    (lambda key: key == "measured_duration_s" or key.endswith("throughput"),
     lambda summary: summary.null_reasons.get("throughput", "no request finished")),
)


def _null_reasons(result, summary):
    reasons = {}
    families = sorted(summary.null_reasons, key=len, reverse=True)
    for key, value in result.items():
        if value is not None:
            continue
        family = next((f for f in families if key == f or key.startswith(f + "_")), None)
        if family is not None:
            reasons[key] = summary.null_reasons[family]
            continue
        reason = next((why(summary) for matches, why in NULL_REASONS_BY_KEY if matches(key)), None)
        reasons[key] = reason or "not applicable to this stage"
    return reasons


def write_json(path, document):
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=1, allow_nan=False)
        handle.write("\n")
    os.replace(temporary, path)


def write_outputs(options, spec, stages, run, output_dir, run_id, started):
    """Reports, request records and the contract document; returns (document, any success)."""
    prompts = orchestrate.build_prompts(spec)
    data = _data_section(prompts, spec)
    run_info = {"run_id": run_id, "model": options.model, "url": spec["url"].split("?")[0],
                "server_name": options.server_name, "server_version": run.server_version,
                "server_header": run.server_header, "workers": options.workers, "endpoint": options.endpoint,
                "stream": options.stream, "description": options.description, "hostname": socket.gethostname()}
    native_args = {k: v for k, v in parameters(options, spec, stages, spec["url"]).items() if v not in (None, "", [], {})}
    native_args.pop("stage_plan", None)
    report_files = []
    origin = run.outcomes[0].origin if run.outcomes else 0.0
    for outcome in run.outcomes:
        document = report_lib.build_stage_report(outcome.summary, run_info, data, native_args)
        name = REPORT_PATTERN % outcome.stage.index
        write_json(os.path.join(output_dir, name), metrics.sanitize(document, {}))
        report_files.append(name)
    requests_path = os.path.join(output_dir, REQUESTS_FILE)
    with open(requests_path + ".tmp", "w", encoding="utf-8") as handle:
        for outcome in run.outcomes:
            for record in outcome.records:
                handle.write(json.dumps(metrics.sanitize(record.as_dict(origin, options.chunk_gaps), {}),
                                        allow_nan=False) + "\n")
    os.replace(requests_path + ".tmp", requests_path)

    headline_outcome = run.outcomes[-1] if run.outcomes else None
    result = {}
    if headline_outcome is not None:
        result.update(headline_outcome.summary.headline())
        result["null_reasons"] = _null_reasons(result, headline_outcome.summary)
        result["headline_stage"] = headline_outcome.stage.index
    result["stages"] = [outcome.summary.summary() for outcome in run.outcomes]
    result.update(
        run_id=run_id, started=report_lib.iso(started), ended=report_lib.iso(time.time()),
        server_version=run.server_version, server_header=run.server_header, warnings=run.warnings,
        ignore_eos_sent=run.ignore_eos_sent,
        request_fields_dropped=run.preflight["dropped"] if run.preflight else [],
        preflight_server_said=run.preflight["server_said"] if run.preflight else [],
        stopped=run.stopped,
        connections_opened=run.connections_opened, output_dir=os.path.abspath(output_dir),
        files={"reports": report_files, "requests": REQUESTS_FILE, "result": RESULT_FILE},
        requests_file_origin=report_lib.iso(run.outcomes[0].started_wall) if run.outcomes else None,
        requests_file_origin_monotonic=origin if run.outcomes else None,
    )
    extra_reasons = {}
    document = {"name": HARNESS_NAME, "framework": "perfscale-llm-load %s" % HARNESS_VERSION,
                "@parameters": parameters(options, spec, stages, orchestrate.build_settings(spec).target.display()),
                "@result": result}
    document = metrics.sanitize(document, extra_reasons)
    if extra_reasons:
        document["@result"].setdefault("null_reasons", {}).update(extra_reasons)
    write_json(os.path.join(output_dir, RESULT_FILE), document)
    succeeded = any(outcome.summary.succeeded for outcome in run.outcomes)
    return document, succeeded


def main(argv=None):
    parser = build_parser()
    options = parser.parse_args(argv)
    options.run_id = options.run_id or uuid.uuid4().hex

    def say(line):
        sys.stderr.write("llm_load: %s\n" % line)
        sys.stderr.flush()

    try:
        stages = stages_from_options(options)
        spec = spec_from_options(options)
        orchestrate.build_settings(spec)    # URL, TLS and token checks before anything runs
        data = orchestrate.build_prompts(spec)
        os.makedirs(options.output, exist_ok=True)
    except (config_lib.ConfigError, DistributionError) as exc:
        say(str(exc))
        return EXIT_USAGE
    except OSError as exc:
        say("--output %s: %s" % (options.output, exc.strerror or exc))
        return EXIT_USAGE
    stale = sorted(name for name in os.listdir(options.output) if name.startswith("benchmark_report_stage_"))
    if stale:
        say("warning: --output %s already holds %s: files of this run replace those of its stages only"
            % (options.output, ", ".join(stale[:3]) + (", ..." if len(stale) > 3 else "")))
    if getattr(data.counter, "fallback_reason", None):
        say("warning: %s; the word estimate counts the tokens (docs/llm-load.md)" % data.counter.fallback_reason)
    run_id = options.run_id
    started = time.time()
    try:
        run = orchestrate.run(spec, stages, options.workers, say, options.preflight)
    except StartError as exc:
        say(str(exc))
        return EXIT_START
    except config_lib.ConfigError as exc:
        say(str(exc))
        return EXIT_USAGE
    except RuntimeError as exc:       # a worker process failed
        say(str(exc))
        return EXIT_START
    for warning in run.warnings:
        say("warning: %s" % warning)
    document, succeeded = write_outputs(options, spec, stages, run, options.output, run_id, started)
    sys.stdout.write(json.dumps(document, allow_nan=False) + "\n")
    sys.stdout.flush()
    say("wrote %s (%d stage report(s), %s) at %s"
        % (os.path.abspath(options.output), len(run.outcomes), REQUESTS_FILE, datetime.datetime.now().strftime("%H:%M:%S")))
    if not succeeded:
        errors = {}
        for outcome in run.outcomes:
            for name, count in outcome.summary.errors.items():
                errors[name] = errors.get(name, 0) + count
        say("%s (errors: %s)" % (run.stopped or "no measured request succeeded",
                                 ", ".join("%s x%d" % item for item in sorted(errors.items())) or "none sent"))
        return EXIT_NO_SUCCESS
    return EXIT_OK
