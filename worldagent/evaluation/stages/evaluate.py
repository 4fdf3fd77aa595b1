"""evaluate: the eval split through every model of ``evaluate.models`` (``base`` alone, the
``sft``/``dpo``/``grpo`` adapters, the ``champion`` named by the champion reference file, the
``reference`` outputs as the upper bound), one model in memory at a time → eval.json and friends."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from worldagent.config import Params
from worldagent.errors import InputError
from worldagent.evaluation.eval_files import write_eval_outputs
from worldagent.evaluation.evaluate import evaluate_models, load_eval_rows, load_token_files
from worldagent.evaluation.metrics import EvalReport
from worldagent.evaluation.policies import HFPolicy, Policy, ReferencePolicy
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
