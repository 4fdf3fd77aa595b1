"""One model's evaluation file: what the per-model evaluate step writes and the combining step reads.

Each model (``base``, ``nearest``, ``sft``, ``experience``, ``dpo``, ``grpo``, ``champion``,
``reference``) is evaluated in its own cached step, so a model that did not change is never
generated again. Its file (``reports/world_agent/eval/<model>.json``) holds one or more *rows*: the
model decoded as configured and, for models in ``evaluate.unconstrained_models``, again without
the constrained decoder (row ``"<model> (unconstrained)"``). Each row keeps its metrics, its
per-intent results, the raw outputs (to replay or inspect) and the deterministic generation counts.

The bytes are deterministic (sorted keys, no timings): an unchanged model rewrites an identical
file, so DVC reruns nothing downstream. Timings (tokens per second) go to a separate speed file
(:func:`speed_payload`), which is a DVC metric, not a dependency of anything.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from worldagent.errors import InputError
from worldagent.evaluation.metrics import EvalReport, IntentResult, ModelEval, ModelMetrics
from worldagent.io import atomic_write_text, read_json

UNCONSTRAINED = " (unconstrained)"


def unconstrained_name(model: str) -> str:
    return model + UNCONSTRAINED


class GenerationCounts(BaseModel):
    """What decoding produced; deterministic for greedy decoding (no wall-clock time here)."""

    model_config = ConfigDict(extra="forbid")

    prompts: int = Field(ge=0)
    new_tokens: int = Field(ge=0)
    batches: int = Field(ge=0)
    batch_size: int = Field(ge=1)
    max_new_tokens: int = Field(ge=1)
    constrained: bool


class SelfCheckCounts(BaseModel):
    """How the self-check went for one row of the table (deterministic: no timings)."""

    model_config = ConfigDict(extra="forbid")

    attempts: int = Field(ge=0)  # retries allowed per prompt
    first_passed: int = Field(ge=0)  # prompts whose first answer passed its own check
    fixed: int = Field(ge=0)  # prompts whose first answer failed and a retry passed
    failed: int = Field(ge=0)  # prompts where no answer passed (the first answer is kept)
    retried_answers: int = Field(ge=0)  # answers produced by retries, all prompts together
    # Ranked (``evaluate.self_check_words``): "passed" above means the top rank, the page also shows
    # every phrase the intent quotes; of the ``failed``, ``kept_rendering`` kept an answer that passes
    # the own check without the words.
    ranked: bool = False
    kept_rendering: int = Field(default=0, ge=0)

    def note(self, name: str) -> str:
        """One line for the report."""
        total = self.first_passed + self.fixed + self.failed
        check = "renders, no blocked call, accessibility and pattern rules"
        if not self.ranked:
            return (
                f"`{name}` self-check (its own story run: {check}; never the hidden assertions):"
                f" {self.first_passed} of {total} first answers passed; up to {self.attempts} retries fixed"
                f" {self.fixed} more ({self.retried_answers} answers produced again); {self.failed} kept a"
                " failing first answer."
            )
        return (
            f"`{name}` self-check, ranked (its own story run: {check}; above that, the page shows every"
            f" phrase the intent quotes; never the hidden assertions): {self.first_passed} of {total} first"
            f" answers reached the top rank; up to {self.attempts} retries brought {self.fixed} more"
            f" ({self.retried_answers} answers produced again); of the {self.failed} that never did,"
            f" {self.kept_rendering} kept an answer that passes the own check."
        )


class EvalRow(BaseModel):
    """One row of the report's table: a model, decoded one way, on every eval intent."""

    model_config = ConfigDict(extra="forbid")

    name: str  # "grpo", "grpo (unconstrained)", "nearest", ...
    metrics: ModelMetrics
    per_intent: list[IntentResult]
    outputs: list[str]  # the raw answer to each intent, in ``ModelEvalFile.intents`` order
    generation: GenerationCounts | None = None  # None: no model generated (nearest, reference)
    copied: list[str] | None = None  # nearest: the training story id copied for each intent
    self_check: SelfCheckCounts | None = None  # None: no retries (evaluate.self_check_*)


class ModelEvalFile(BaseModel):
    """``eval/<model>.json``: the rows of one model; none when it was not evaluated (no champion yet)."""

    model_config = ConfigDict(extra="forbid")

    model: str
    intents: list[str]  # eval intent ids, in evaluation order
    components: list[str]
    rows: list[EvalRow] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def write_model_eval(path: Path, evaluation: ModelEvalFile) -> Path:
    """Atomically, with deterministic bytes (sorted keys)."""
    payload = evaluation.model_dump(mode="json")
    atomic_write_text(path, json.dumps(payload, ensure_ascii=False, sort_keys=True, indent=1) + "\n")
    return path


def read_model_eval(path: Path, model: str | None = None) -> ModelEvalFile:
    """A model's evaluation file, checked (and, given ``model``, checked to be that model's)."""
    hint = f"run the evaluate_{model} stage first" if model else "run the per-model evaluate stage first"
    raw = read_json(path, "a model's evaluation", hint=hint, expect=dict)
    try:
        evaluation = ModelEvalFile.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "<root>"
        raise InputError(f"{path}: not a model evaluation file ({where}: {first['msg']})") from None
    if model is not None and evaluation.model != model:
        raise InputError(f"{path}: holds the evaluation of {evaluation.model!r}, expected {model!r}")
    for row in evaluation.rows:
        if [result.id for result in row.per_intent] != evaluation.intents or len(row.outputs) != len(
            evaluation.intents
        ):
            raise InputError(f"{path}: row {row.name!r} does not cover the file's intents in order")
    return evaluation


def combine(evaluations: Sequence[ModelEvalFile], notes: Sequence[str] = ()) -> EvalReport:
    """One :class:`EvalReport` (what eval.json holds) from per-model files, rows in the files' order.

    Every file must have evaluated the same intents in the same order: a model evaluated on another
    eval split (a stale file) is an error, not a silently shorter comparison.
    """
    report = EvalReport(notes=list(notes))
    reference: ModelEvalFile | None = None
    for evaluation in evaluations:
        # a sentence several models share (the precision they were decoded in) is said once
        report.notes.extend(note for note in evaluation.notes if note not in report.notes)
        if not evaluation.rows:
            continue
        if reference is None:
            reference = evaluation
            report.intents = list(evaluation.intents)
            report.components = list(evaluation.components)
        elif evaluation.intents != reference.intents:
            raise InputError(
                f"the {evaluation.model!r} evaluation covers other intents than {reference.model!r}'s"
                f" ({len(evaluation.intents)} vs {len(reference.intents)}): rerun its evaluate stage"
            )
        for row in evaluation.rows:
            if row.name in report.models:
                raise InputError(f"row {row.name!r} appears in two model evaluations")
            report.models[row.name] = ModelEval(metrics=row.metrics, per_intent=row.per_intent)
    return report


def speed_payload(model: str, timings: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The speed file: per row, prompts, new tokens, seconds and tokens per second (varies run to run)."""
    return {"model": model, "rows": {name: dict(values) for name, values in timings.items()}}
