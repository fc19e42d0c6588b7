"""The log of a Hugging Face ``Trainer`` run (as fms-hf-tuning prints it), from a summary.

A pod annotated ``kubesim.perfscale.io/trainer-summary`` with a JSON object (for
example ``{"train_runtime": 123.4, "train_samples_per_second": 8.1,
"train_steps_per_second": 0.51, "train_loss": 1.23, "epoch": 1.0}``) logs, when
it is rank 0 (``kubesim.perfscale.io/rank`` absent or ``0``, and no Job
completion index other than 0), what ``Trainer.train`` prints: the
``***** Running training *****`` banner, ``kubesim.perfscale.io/trainer-steps``
(default 4) loss records, the progress bar's last line and the summary record
itself, each record being Python's ``str()`` of the metrics dict as
``transformers.trainer_callback.ProgressCallback.on_log`` writes it.
"""

import json
import math

from kubesim.controllers.util import annotation


def is_rank_zero(pod):
    annotations = pod["metadata"].get("annotations") or {}
    index = annotations.get("batch.kubernetes.io/job-completion-index")
    return str(annotation(pod, "rank", "0")) == "0" and index in (None, "0")


def summary_of(pod):
    text = annotation(pod, "trainer-summary")
    if not text:
        return None
    try:
        summary = json.loads(text)
    except ValueError:
        return {"train_runtime": 0.0, "error": "trainer-summary is not JSON: %s" % text}
    return summary if isinstance(summary, dict) else None


def _clock(seconds):
    seconds = int(seconds)
    return "%02d:%02d" % (seconds // 60, seconds % 60) if seconds < 3600 else \
        "%d:%02d:%02d" % (seconds // 3600, seconds // 60 % 60, seconds % 60)


def trainer_lines(summary, steps=4):
    """The log lines of a training run ending with ``summary``."""
    runtime = float(summary.get("train_runtime", 60.0))
    total_steps = max(1, int(round(float(summary.get("train_steps_per_second", 1.0)) * runtime)))
    samples = int(round(float(summary.get("train_samples_per_second", total_steps)) * runtime))
    epochs = float(summary.get("epoch", 1.0))
    final_loss = float(summary.get("train_loss", 1.0))
    lines = ["***** Running training *****", "  Num examples = {:,}".format(max(samples, 1)),
             "  Num Epochs = %d" % max(1, int(math.ceil(epochs))),
             "  Total optimization steps = {:,}".format(total_steps)]
    steps = max(0, int(steps))
    for index in range(1, steps + 1):
        fraction = index / float(steps + 1)
        record = {"loss": round(final_loss * (1.6 - 0.6 * fraction), 4), "grad_norm": round(1.5 - fraction, 4),
                  "learning_rate": float("%.3g" % (2e-05 * (1 - fraction))), "epoch": round(epochs * fraction, 2)}
        lines.append(str(record))
    per_step = runtime / total_steps
    lines.append("100%%|##########| %d/%d [%s<00:00, %.2fs/it]" % (total_steps, total_steps, _clock(runtime), per_step))
    lines.append(str(summary))
    return lines


def pod_trainer_lines(pod):
    """Trainer log lines of a pod ([] unless it is rank 0 with a ``trainer-summary``)."""
    summary = summary_of(pod)
    if summary is None or not is_rank_zero(pod):
        return []
    try:
        steps = int(annotation(pod, "trainer-steps", 4))
    except (TypeError, ValueError):
        steps = 4
    return trainer_lines(summary, steps)
