"""Checks a run makes before its first stage, so a setting that cannot work here fails in seconds.

bfloat16 on a CPU is fast only where the CPU multiplies bfloat16 natively (AVX-512 with BF16, or
AMX): torch then hands the matrix products to oneDNN. Elsewhere (an AVX2-only CPU, e.g. many AMD
EPYC hosts) every bfloat16 matrix product takes torch's generic fallback: the smollm2 profile's
first SFT step took 375 s there against 29 s in float32 (docs/profiles.md, "Precision and
machines"), so SFT alone would run for about 15 hours. ``make pipeline`` and the flows stop at
once with the fix instead.

A precision that runs at full speed here can still differ from the one the committed run trained
in (bfloat16 on an AVX-512 host, float32 on an AVX2 one): :func:`precision_note` says so before the
run, since every training stage then writes other bytes than ``dvc.lock`` records.

This module is read by the flows and the command line only, never by a DVC stage, so a check can
change without changing what any stage computed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from worldagent.config import EvaluateParams, ModelParams
from worldagent.errors import InputError
from worldagent.io import read_json
from worldagent.pipeline.table import Pipeline, Stage

if TYPE_CHECKING:
    import torch

    from worldagent.pipeline.plan import StagePlan

ALLOW_SLOW_BFLOAT16 = "WORLDAGENT_ALLOW_SLOW_BFLOAT16"


class PrecisionError(InputError):
    """params.yaml asks for a precision this machine can only emulate, many times slower."""


def check_precision(
    model: ModelParams,
    evaluate: EvaluateParams,
    params_path: Path,
    device: str | None = None,
    native_bfloat16: Callable[[], bool] | None = None,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Refuse ``model.dtype`` or ``evaluate.dtype`` ``bfloat16`` on a CPU without native bfloat16
    (unless the environment says to go ahead); every other setting and device passes. ``device`` defaults to the one the
    stages would pick, ``native_bfloat16`` to :func:`worldagent.lm.device.cpu_multiplies_bfloat16`."""
    from worldagent.lm import device as devices

    environ = os.environ if environ is None else environ
    asked = [
        name
        for name, dtype in (("model.dtype", model.dtype), ("evaluate.dtype", evaluate.dtype))
        if dtype == "bfloat16"
    ]
    if not asked or environ.get(ALLOW_SLOW_BFLOAT16) == "1":
        return
    if (device or devices.select_device()) != "cpu" or (native_bfloat16 or devices.cpu_multiplies_bfloat16)():
        return
    import torch

    setting = f"{' and '.join(asked)} {'is' if len(asked) == 1 else 'are'} bfloat16"
    capability = torch.backends.cpu.get_cpu_capability()
    raise PrecisionError(
        f"{params_path}: {setting}, but this CPU ({capability}) has no native bfloat16 matrix products, so every "
        "training and decoding step would take torch's generic fallback, about 13 times slower than float32 (the "
        "smollm2 profile's SFT: ~15 h instead of ~1 h on two cores). Set "
        f"{' and '.join(f'`{name}: prefer-bfloat16`' for name in asked)} in params.yaml (float32 on this CPU, "
        f"bfloat16 where the hardware multiplies it natively), or run anyway with {ALLOW_SLOW_BFLOAT16}=1. Results "
        "in float32 differ from a bfloat16 run's, as results from another machine do."
    )


TRAINING_PRECISION = ("model", "model.dtype")  # the params keys (a section or a key) that set a precision
PRECISION = (*TRAINING_PRECISION, "evaluate", "evaluate.dtype")


def reads_precision(stage: Stage, keys: tuple[str, ...] = PRECISION) -> bool:
    """Whether ``stage`` reads ``model.dtype`` or ``evaluate.dtype`` (or only those ``keys``)."""
    return any(key in keys for key in stage.params)


def recorded_precisions(pipelines: Iterable[Pipeline], root: Path) -> dict[str, str]:
    """The precision each training stage's metrics file under ``root`` records (``"bfloat16 on
    cpu"``: the trainers write it at the top or under ``training``), by stage name; stages whose
    metrics are not written yet, and stages that read no ``model.dtype``, are left out."""
    recorded: dict[str, str] = {}
    for pipeline in pipelines:
        for step in pipeline.steps:
            if not isinstance(step, Stage) or not reads_precision(step, TRAINING_PRECISION):
                continue
            for metrics in step.metrics.values():
                try:
                    data = read_json(root / metrics, "a stage's metrics")
                except (OSError, ValueError):  # not written yet, or unreadable (InputError is a ValueError)
                    continue
                for holder in (data, data.get("training")) if isinstance(data, dict) else ():
                    if isinstance(holder, dict) and isinstance(holder.get("precision"), str):
                        recorded[step.name] = holder["precision"]
                        break
    return recorded


def _same_precision(recorded: str, dtype: torch.dtype, device: str) -> bool:
    """Whether a recorded precision (``"<dtype> on <device type>"``) is ``dtype`` on ``device``."""
    import torch

    name, _, on = recorded.partition(" on ")
    return getattr(torch, name, None) == dtype and on == device


def precision_note(model: ModelParams, recorded: Mapping[str, str], device: str | None = None) -> str | None:
    """A note when ``model.dtype`` trains here in another precision than ``recorded`` (the committed
    run's, by stage, from :func:`recorded_precisions`): those stages then write other bytes than the
    lock records, so a run here trains them again and the report's figures move. None when every
    recorded precision is this machine's, or nothing is recorded."""
    from worldagent.lm import device as devices

    device = device or devices.select_device()
    here = devices.resolve_dtype(model.dtype, device)
    differing = {
        stage: precision for stage, precision in recorded.items() if not _same_precision(precision, here, device)
    }
    if not differing:
        return None
    return (
        f"`model.dtype: {model.dtype}` trains in {devices.precision_label(here, device)} here, but the "
        f"committed run trained {', '.join(differing)} in {' and '.join(sorted(set(differing.values())))}: those "
        "stages will train again, into other bytes than dvc.lock records, and the report's figures can move "
        '(docs/profiles.md, "Precision and machines").'
    )


def run_plan(
    pipelines: Sequence[Pipeline], root: Path, device: str | None = None
) -> tuple[str | None, list[StagePlan], str]:
    """The profile ``root/params.yaml`` is set to, each stage's expected time and the plan's text:
    what ``worldagent preflight`` and every flow print before the first stage
    (:mod:`worldagent.pipeline.plan`), with a note when this machine suits another profile better."""
    from worldagent import profiles
    from worldagent.lm import device as devices
    from worldagent.pipeline.plan import plan_for

    profile = profiles.current(root / "params.yaml", root / profiles.PROFILES_DIR)
    plan, text = plan_for(pipelines, root, profile, device or devices.select_device())
    return profile, plan, text
