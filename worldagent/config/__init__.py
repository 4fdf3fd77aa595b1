"""Typed view of ``params.yaml``: one pydantic model per stage section.

Every section forbids unknown keys, so a typo such as ``discover.stirct`` fails
loudly with the key's dotted path instead of silently using a default.

The sections are split by concern, one module each, so that a DVC stage depends on the schemas of
the sections it declares and no other (``worldagent.pipeline.deps``): ``base`` (the ``Section`` base
and shared field types), ``data`` (discover, generate, reward, storytest), ``model`` (model, lora),
``training`` (sft, dpo, grpo, experience), ``evaluation`` (evaluate, compare, gate), ``registry``
(registry, upload, deploy, orchestrate), ``intervention`` and ``specialists``. This module holds the
root ``Params`` (and its root fields such as ``seed``), loading and validation, and re-exports every
section class, so ``from worldagent.config import X`` keeps working.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from worldagent.config.base import NgramGuard, Section
from worldagent.config.data import (
    DATA_STORIES_DRAWN,
    DATA_STORIES_HELDOUT,
    DiscoverParams,
    GenerateParams,
    RewardWeights,
    StorytestParams,
)
from worldagent.config.evaluation import (
    CompareParams,
    EvalModel,
    EvaluateParams,
    GateParams,
    GeneratingModel,
    SelfCheckModel,
)
from worldagent.config.intervention import (
    InterventionClipParams,
    InterventionCompareParams,
    InterventionEncoderParams,
    InterventionExportParams,
    InterventionGateParams,
    InterventionParams,
    InterventionSimulateParams,
    InterventionTrainParams,
)
from worldagent.config.model import LoraParams, MarkerRowsParams, ModelParams, PretrainParams, TinyModelParams
from worldagent.config.registry import DeployParams, OrchestrateParams, RegistryParams, UploadParams
from worldagent.config.specialists import BrowserSetParams, SpecialistsParams, SpecialistsTrainerParams
from worldagent.config.training import (
    DpoParams,
    ExperienceParams,
    FreedMemory,
    GrpoParams,
    SftParams,
    TrainerParams,
)
from worldagent.errors import InputError
from worldagent.guard.files import MissingFileError
from worldagent.guard.yaml import read_yaml

__all__ = [
    "DATA_STORIES_DRAWN",
    "DATA_STORIES_HELDOUT",
    "REGISTRY_URL_ENV",
    "BrowserSetParams",
    "CompareParams",
    "DeployParams",
    "DiscoverParams",
    "DpoParams",
    "EvalModel",
    "EvaluateParams",
    "ExperienceParams",
    "FreedMemory",
    "GateParams",
    "GenerateParams",
    "GeneratingModel",
    "GrpoParams",
    "InterventionClipParams",
    "InterventionCompareParams",
    "InterventionEncoderParams",
    "InterventionExportParams",
    "InterventionGateParams",
    "InterventionParams",
    "InterventionSimulateParams",
    "InterventionTrainParams",
    "LoraParams",
    "MarkerRowsParams",
    "ModelParams",
    "NgramGuard",
    "OrchestrateParams",
    "Params",
    "ParamsError",
    "PretrainParams",
    "RegistryParams",
    "RewardWeights",
    "Section",
    "SelfCheckModel",
    "SftParams",
    "SpecialistsParams",
    "SpecialistsTrainerParams",
    "StorytestParams",
    "TinyModelParams",
    "TrainerParams",
    "UploadParams",
    "load_params",
    "parse_params",
    "with_environment",
]


class Params(Section):
    seed: int = 1234
    discover: DiscoverParams = DiscoverParams()
    generate: GenerateParams = GenerateParams()
    reward: RewardWeights = RewardWeights()
    storytest: StorytestParams = StorytestParams()
    model: ModelParams = ModelParams()
    lora: LoraParams = LoraParams()
    sft: SftParams = SftParams(epochs=3.0, learning_rate=5e-3)
    # batch 2 x 2 accumulation = 4 pairs per step keeps the peak memory under 4 GB
    dpo: DpoParams = DpoParams(learning_rate=5e-4, max_steps=8, batch_size=2, gradient_accumulation_steps=2)
    experience: ExperienceParams = ExperienceParams(
        learning_rate=5e-3, max_steps=8, batch_size=2, max_length=2560, logging_steps=1
    )
    grpo: GrpoParams = GrpoParams(learning_rate=5e-4, max_steps=4, batch_size=4, max_length=4096, logging_steps=1)
    evaluate: EvaluateParams = EvaluateParams()
    compare: CompareParams = CompareParams()
    gate: GateParams = GateParams()
    registry: RegistryParams = RegistryParams()
    upload: UploadParams = UploadParams()
    deploy: DeployParams = DeployParams()
    orchestrate: OrchestrateParams = OrchestrateParams()
    intervention: InterventionParams = InterventionParams()
    specialists: SpecialistsParams = SpecialistsParams()


class ParamsError(InputError):
    """params.yaml is missing, unreadable or invalid; the message names the file and key."""


def _format_validation_error(path: Path, error: ValidationError) -> str:
    lines = [f"{path}: invalid parameters"]
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"]) or "<root>"
        message = "unknown key" if item["type"] == "extra_forbidden" else item["msg"]
        lines.append(f"  {key}: {message}")
    return "\n".join(lines)


def parse_params(raw: Any, path: Path = Path("params.yaml")) -> Params:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ParamsError(f"{path}: expected a mapping at the top level, got {type(raw).__name__}")
    try:
        return Params.model_validate(raw)
    except ValidationError as error:
        raise ParamsError(_format_validation_error(path, error)) from None


def load_params(path: Path | str = "params.yaml") -> Params:
    path = Path(path)
    try:
        # The file and YAML guards: a regular file under the cap; alias bombs, depth and lone surrogates refused.
        raw = read_yaml(path, what="parameters", hint="run from the project root or pass --params")
    except MissingFileError:
        raise ParamsError(f"{path}: file not found (run from the project root or pass --params)") from None
    except InputError as error:
        raise ParamsError(str(error)) from None
    return with_environment(parse_params(raw, path))


# The production registry's URL carries a password, so it comes from the environment (a CI secret),
# never from params.yaml: docs/production.md.
REGISTRY_URL_ENV = "WORLDAGENT_REGISTRY_URL"


def with_environment(params: Params, environ: Mapping[str, str] | None = None) -> Params:
    """``params`` with the settings the environment overrides: ``registry.url`` from WORLDAGENT_REGISTRY_URL."""
    url = (os.environ if environ is None else environ).get(REGISTRY_URL_ENV, "").strip()
    if not url:
        return params
    return params.model_copy(update={"registry": params.registry.model_copy(update={"url": url})})
