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
from collections.abc import Callable
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
from worldagent.evaluation.report import (
    COMPARE_JSON,
    EVAL_JSON,
    GATE_JSON,
    read_eval_report,
    write_eval_outputs,
    write_report,
)
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
    models_dir: Path,
    rows: list[dict[str, Any]],
    champion: Champion | None,
    loader: Loader | None = None,
) -> tuple[dict[str, Policy | Callable[[], Policy]], list[str]]:
    """Policy factories in ``evaluate.models`` order, and notes for the report."""
    loader = loader or default_loader
    base_dir = models_dir / "base"
    notes: list[str] = []
    entries: dict[str, Policy | Callable[[], Policy]] = {}

    def hf(adapter: Path | None, name: str) -> Callable[[], Policy]:
        def make() -> Policy:
            model, tokenizer = loader(base_dir, adapter)
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
            if not base_dir.is_dir():
                raise InputError(f"{base_dir}: base model not found (run the base stage first)")
            entries[name] = hf(None, name)
        elif name == "champion":
            if champion is None:
                notes.append("No champion is deployed yet (first run): the champion was not evaluated.")
                continue
            notes.append(f"The champion is {champion.label} ({champion.path}), re-evaluated on the same intents.")
            entries[name] = hf(champion.path, name)
        else:
            adapter = models_dir / name
            if not adapter.is_dir():
                raise InputError(f"{adapter}: {name} adapter not found (run the {name} stage first)")
            entries[name] = hf(adapter, name)
    return entries, notes


def evaluate_stage(
    params: Params,
    *,
    eval_rows: Path,
    stories_jsonl: Path,
    stories_root: Path,
    models_dir: Path,
    champion_json: Path,
    out_dir: Path,
    root: Path = Path("."),
    loader: Loader | None = None,
) -> EvalReport:
    """Evaluate every model of ``evaluate.models`` on ``eval_rows``; write ``out_dir``/eval.json etc.

    ``champion_json`` is the champion reference (:mod:`worldagent.registry.champion`); paths in it
    are relative to ``root``.
    """
    from worldagent.storytest.runner import make_runner

    rows = load_eval_rows(eval_rows, params.evaluate.max_intents)
    champion = (
        load_champion(champion_json, root, params.registry.family) if "champion" in params.evaluate.models else None
    )
    policies, notes = build_policies(params, models_dir, rows, champion, loader)
    report = evaluate_models(
        policies,
        rows,
        stories_root=stories_root,
        runner=make_runner(params.storytest),
        weights=params.reward,
        token_files=load_token_files(stories_jsonl),
        notes=notes,
    )
    write_eval_outputs(report, out_dir)
    for name, evaluation in report.models.items():
        m = evaluation.metrics
        log.info(
            "%-9s reward %.3f  story %.2f  a11y %.2f  parse %.2f  violations %.2f  efficiency %.2f  (n=%d)",
            name,
            m.mean_reward,
            m.story_pass_rate,
            m.a11y_pass_rate,
            m.parse_rate,
            m.constraint_violations,
            m.tool_efficiency,
            m.n,
        )
    return report


def compare_stage(params: Params, *, eval_dir: Path, out_json: Path) -> dict[str, Any]:
    """Candidate − champion and base, per metric, with paired bootstrap CIs → ``out_json``."""
    result = compare(
        read_eval_report(eval_dir),
        candidate=params.compare.candidate,
        samples=params.compare.bootstrap_samples,
        confidence=params.compare.confidence,
        seed=params.seed,
    )
    atomic_write_text(out_json, pretty_json(result))
    for name, versus in result["comparisons"].items():
        if versus is None:
            log.info("%s vs %s: not evaluated", result["candidate"], name)
            continue
        diff = versus["metrics"]["mean_reward"]["diff"]
        log.info(
            "%s − %s mean reward %+.3f [%+.3f, %+.3f]",
            result["candidate"],
            name,
            diff["mean"],
            diff["low"],
            diff["high"],
        )
    for note in result["notes"]:
        log.info("%s", note)
    return result


def gate_stage(params: Params, *, eval_dir: Path, compare_json: Path, models_dir: Path, out_dir: Path) -> GateDecision:
    """The shared gate on the candidate's metrics → ``out_dir``/gate.json and report.md.

    gate.json records the content hash of ``models_dir/<candidate>``, the adapter deploy may publish.
    """
    report = read_eval_report(eval_dir)
    comparison = read_json(compare_json, "the comparison", hint="run the compare stage first", expect=dict)
    candidate = str(comparison.get("candidate") or params.compare.candidate)
    if candidate not in report.models:
        raise InputError(f"{eval_dir / EVAL_JSON}: the candidate {candidate!r} was not evaluated")
    decision = gate_decision(WORLD_AGENT, params, report.models[candidate].metrics.model_dump(), comparison)
    family = WORLD_AGENT.registry_family(params)
    payload = gate_payload(decision, family=family, candidate=candidate, artifact_dir=models_dir / candidate)
    atomic_write_text(out_dir / GATE_JSON, pretty_json(payload))
    write_report(out_dir, report, comparison, decision, candidate)
    log.info("gate %s for %s", "PASSED" if decision.passed else "FAILED", candidate)
    for reason in decision.reasons:
        log.info("  %s", reason)
    return decision


__all__ = ["COMPARE_JSON", "build_policies", "compare_stage", "evaluate_stage", "gate_stage"]
