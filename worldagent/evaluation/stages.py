"""The world agent's evaluate, compare and gate stages as plain functions of explicit paths.

- :func:`evaluate_stage`: the eval split through every model of ``evaluate.models`` (``base`` alone,
  the ``sft``/``dpo``/``grpo`` adapters, the ``champion`` named by the champion reference file, the
  ``reference`` outputs as the upper bound), one model in memory at a time → eval.json and friends.
- :func:`compare_stage`: candidate − champion/base per metric with paired bootstrap CIs → compare.json.
- :func:`gate_stage`: the shared gate (:mod:`worldagent.evaluation.gate`) with the world agent's rules
  (:data:`worldagent.evaluation.family.WORLD_AGENT`) → gate.json (with the candidate's content hash)
  and report.md.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from worldagent.config import Params
from worldagent.errors import InputError
from worldagent.evaluation.compare import compare
from worldagent.evaluation.evaluate import evaluate_models, load_eval_rows, load_token_files
from worldagent.evaluation.family import WORLD_AGENT, gate_decision
from worldagent.evaluation.gate import GateDecision, gate_payload
from worldagent.evaluation.metrics import EvalReport
from worldagent.evaluation.policies import HFPolicy, Policy, ReferencePolicy
from worldagent.evaluation.report import read_eval_report, write_eval_outputs, write_report
from worldagent.io import atomic_write_text, pretty_json, read_json
from worldagent.registry.champion import Champion, load_champion

log = logging.getLogger("worldagent.evaluation")

# (base_dir, adapter_dir or None) -> (model, tokenizer); the default is worldagent.policy.load.load_policy.
Loader = Callable[[Path, "Path | None"], tuple[Any, Any]]


def default_loader(base_dir: Path, adapter_dir: Path | None) -> tuple[Any, Any]:
    from worldagent.policy.load import load_policy

    return load_policy(base_dir, adapter_dir)


def build_policies(
    params: Params,
    rows: list[dict[str, Any]],
    base: Path,
    adapters: Mapping[str, Path],
    champion: Champion | None,
    loader: Loader | None = None,
) -> tuple[dict[str, Policy | Callable[[], Policy]], list[str]]:
    """Policy factories in ``evaluate.models`` order, and notes for the report.

    ``adapters`` maps a stage name (sft, dpo, grpo) to its adapter directory.
    """
    loader = loader or default_loader
    notes: list[str] = []
    entries: dict[str, Policy | Callable[[], Policy]] = {}

    def hf(adapter: Path | None, name: str) -> Callable[[], Policy]:
        def make() -> Policy:
            model, tokenizer = loader(base, adapter)
            return HFPolicy(
                model,
                tokenizer,
                max_new_tokens=params.evaluate.max_new_tokens,
                batch_size=params.evaluate.batch_size,
                progress=sys.stderr.isatty(),
                desc=f"evaluate {name}",
            )

        return make

    for name in params.evaluate.models:
        if name == "reference":
            entries[name] = ReferencePolicy(rows)
        elif name == "base":
            if not base.is_dir():
                raise InputError(f"{base}: base model not found (run the base stage first)")
            entries[name] = hf(None, name)
        elif name == "champion":
            if champion is None:
                notes.append("No champion is deployed yet (first run): the champion was not evaluated.")
                continue
            notes.append(f"The champion is {champion.label} ({champion.path}), re-evaluated on the same intents.")
            entries[name] = hf(champion.path, name)
        else:
            adapter = adapters[name]
            if not adapter.is_dir():
                raise InputError(f"{adapter}: {name} adapter not found (run the {name} stage first)")
            entries[name] = hf(adapter, name)
    return entries, notes


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
) -> EvalReport:
    """Evaluate every model of ``evaluate.models`` on ``eval_trajectories`` → ``summary`` (eval.json),
    ``intents`` (per-intent rows) and the plots beside ``summary``.

    ``stories`` is the discover stage's stories.jsonl (token files per story), ``stories_dir`` the
    story sources; ``champion`` is the champion reference (:mod:`worldagent.registry.champion`),
    whose artifact path is relative to ``root``.
    """
    from worldagent.storytest.runner import make_runner

    rows = load_eval_rows(eval_trajectories, params.evaluate.max_intents)
    pinned = load_champion(champion, root, params.registry.family) if "champion" in params.evaluate.models else None
    adapters = {"sft": sft, "dpo": dpo, "grpo": grpo}
    policies, notes = build_policies(params, rows, base, adapters, pinned, loader)
    report = evaluate_models(
        policies,
        rows,
        stories_root=stories_dir,
        runner=make_runner(params.storytest),
        weights=params.reward,
        token_files=load_token_files(stories),
        notes=notes,
    )
    write_eval_outputs(report, summary, intents)
    for name, evaluation in report.models.items():
        m = evaluation.metrics
        log.info(
            "%-9s reward %.3f  story %.2f  a11y %.2f  parse %.2f  violations %.2f  efficiency %.2f  (n=%d)",
            *(name, m.mean_reward, m.story_pass_rate, m.a11y_pass_rate, m.parse_rate),
            *(m.constraint_violations, m.tool_efficiency, m.n),
        )
    return report


def compare_stage(params: Params, *, summary: Path, intents: Path, comparison: Path) -> dict[str, Any]:
    """Candidate − champion and base, per metric, with paired bootstrap CIs → ``comparison``."""
    result = compare(
        read_eval_report(summary, intents),
        candidate=params.compare.candidate,
        samples=params.compare.bootstrap_samples,
        confidence=params.compare.confidence,
        seed=params.seed,
    )
    atomic_write_text(comparison, pretty_json(result))
    for name, versus in result["comparisons"].items():
        if versus is None:
            log.info("%s vs %s: not evaluated", result["candidate"], name)
            continue
        diff = versus["metrics"]["mean_reward"]["diff"]
        log.info(
            "%s − %s mean reward %+.3f [%+.3f, %+.3f]",
            *(result["candidate"], name, diff["mean"], diff["low"], diff["high"]),
        )
    for note in result["notes"]:
        log.info("%s", note)
    return result


def gate_stage(
    params: Params, *, summary: Path, intents: Path, comparison: Path, candidate: Path, report: Path, decision: Path
) -> GateDecision:
    """The shared gate with the world agent's rules → ``decision`` (gate.json, recording the content
    hash of the ``candidate`` adapter directory, the one deploy may publish) and ``report`` (report.md)."""
    evaluation = read_eval_report(summary, intents)
    compared = read_json(comparison, "the comparison", hint="run the compare stage first", expect=dict)
    name = str(compared.get("candidate") or params.compare.candidate)
    if name not in evaluation.models:
        raise InputError(f"{summary}: the candidate {name!r} was not evaluated")
    outcome = gate_decision(WORLD_AGENT, params, evaluation.models[name].metrics.model_dump(), compared)
    family = WORLD_AGENT.registry_family(params)
    atomic_write_text(
        decision, pretty_json(gate_payload(outcome, family=family, candidate=name, artifact_dir=candidate))
    )
    write_report(report, evaluation, compared, outcome, name)
    log.info("gate %s for %s", "PASSED" if outcome.passed else "FAILED", name)
    for reason in outcome.reasons:
        log.info("  %s", reason)
    return outcome


__all__ = ["build_policies", "compare_stage", "evaluate_stage", "gate_stage"]
