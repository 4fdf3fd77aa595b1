"""evaluate: the per-model evaluation files → eval.json, eval_intents.jsonl, the plots and the DVCLive folder.

Each model of ``evaluate.models`` is evaluated in its own cached step
(:mod:`worldagent.world_agent.stages.evaluate_model`, one file per model, ``eval/<model>.json``);
:func:`combine_evaluations_stage` reads those of ``evaluate.models`` in that order and writes the files
compare and gate read (formats unchanged: :mod:`worldagent.evaluation.eval_files`), and logs every
model's metrics and the per-model bars into its DVCLive folder (:mod:`worldagent.evaluation.live_metrics`).

:func:`evaluate_stage` is the single-step path (every model in one step, one model in memory at a
time) that the stage table runs until it has one step per model: a thin loop over the same
per-model function.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from worldagent.config import Params
from worldagent.errors import InputError
from worldagent.evaluation.eval_files import write_eval_outputs
from worldagent.evaluation.live_metrics import log_evaluation
from worldagent.evaluation.metrics import EvalReport
from worldagent.evaluation.model_eval import ModelEvalFile, combine, read_model_eval
from worldagent.world_agent.evaluate import load_eval_rows
from worldagent.world_agent.stages.evaluate_model import Loader, evaluate_model, make_scorer, not_listed_note

log = logging.getLogger("worldagent.evaluation")


def _write(report: EvalReport, summary: Path, intents: Path) -> EvalReport:
    write_eval_outputs(report, summary, intents)
    for name, evaluation in report.models.items():
        m = evaluation.metrics
        log.info(
            "%-24s reward %.3f  story %.2f  a11y %.2f  parse %.2f  violations %.2f  efficiency %.2f  (n=%d)",
            *(name, m.mean_reward, m.story_pass_rate, m.a11y_pass_rate, m.parse_rate),
            *(m.constraint_violations, m.tool_efficiency, m.n),
        )
    return report


def combine_model_files(models: Sequence[str], files: Mapping[str, Path], summary: Path, intents: Path) -> EvalReport:
    """The per-model files (model → eval/<model>.json) of every model of ``models`` (``evaluate.models``),
    in that order → ``summary`` (eval.json), ``intents`` (per-intent rows) and the plots beside
    ``summary``. Files of models not in ``models`` are not read; the report says they were not
    evaluated, as it says why a listed model's file has no rows (its notes)."""
    missing = [name for name in models if name not in files]
    if missing:
        raise InputError(f"no evaluation file given for {', '.join(missing)} (evaluate.models lists them)")
    evaluations = [read_model_eval(files[name], name) for name in models]
    report = combine(evaluations)
    report.notes.extend(not_listed_note(name) for name in files if name not in models)
    return _write(report, summary, intents)


def combine_evaluations_stage(
    params: Params,
    *,
    base_eval: Path,
    nearest_eval: Path,
    sft_eval: Path,
    experience_eval: Path,
    dpo_eval: Path,
    grpo_eval: Path,
    champion_eval: Path,
    reference_eval: Path,
    summary: Path,
    intents: Path,
    live: Path,
) -> EvalReport:
    """The stage table's evaluate step: every per-model file → eval.json, eval_intents.jsonl, the plots
    and the DVCLive folder ``live`` (each model's metrics for ``dvc exp show``, the per-model bars)."""
    files = {
        "base": base_eval,
        "nearest": nearest_eval,
        "sft": sft_eval,
        "experience": experience_eval,
        "dpo": dpo_eval,
        "grpo": grpo_eval,
        "champion": champion_eval,
        "reference": reference_eval,
    }
    report = combine_model_files(params.evaluate.models, files, summary, intents)
    log_evaluation(live, report)
    return report


def evaluate_stage(
    params: Params,
    *,
    eval_trajectories: Path,
    stories: Path,
    stories_dir: Path,
    base: Path,
    sft: Path,
    dpo: Path,
    grpo: Path,
    champion: Path,
    summary: Path,
    intents: Path,
    root: Path = Path("."),
    loader: Loader | None = None,
    experience: Path | None = None,
    trajectories: Path | None = None,
) -> EvalReport:
    """Every model of ``evaluate.models`` in one step → ``summary``, ``intents`` and the plots.

    ``nearest`` needs ``trajectories`` and ``experience`` its adapter; without them (the stage table
    does not give them yet) they are skipped with a note.
    """
    rows = load_eval_rows(eval_trajectories, params.evaluate.max_intents)
    scorer = make_scorer(params.storytest, params.reward, stories, stories_dir)
    adapters = {"sft": sft, "experience": experience, "dpo": dpo, "grpo": grpo}
    files: list[ModelEvalFile] = []
    notes: list[str] = []
    for name in params.evaluate.models:
        if (name == "nearest" and trajectories is None) or (name == "experience" and experience is None):
            notes.append(f"`{name}` was not evaluated: this evaluate step was not given its input.")
            continue
        evaluation, _ = evaluate_model(
            params.evaluate,
            name,
            rows,
            scorer,
            seed=params.seed,
            model=params.model,
            registry=params.registry,
            base=base,
            adapter=adapters.get(name),
            champion=champion,
            trajectories=trajectories,
            root=root,
            loader=loader,
        )
        files.append(evaluation)
    return _write(combine(files, notes), summary, intents)
