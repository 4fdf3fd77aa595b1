"""evaluate stage: the eval split + base/sft/dpo/grpo/champion/reference → eval.json, eval_intents.jsonl, plots.

`python -m tasks.evaluate` is the command dvc.yaml runs, with paths from the stage table.

Models: ``base`` is the base model alone, ``sft``/``dpo``/``grpo`` are that stage's adapter
(``load_policy`` merges the adapter's parent chain), ``champion`` is the model pinned in the
champion reference (``models/world_agent/champion.json``, see ``worldagent.registry.champion``),
re-evaluated on the same intents (skipped with a note when there is none: the first run),
``reference`` is the generate stage's solutions (the upper bound). Models load one at a time.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tasks._stage import stage_main
from worldagent.config import Params
from worldagent.errors import InputError
from worldagent.evaluation.evaluate import evaluate_models, load_eval_rows, load_token_files
from worldagent.evaluation.policies import HFPolicy, Policy, ReferencePolicy
from worldagent.evaluation.report import write_eval_outputs
from worldagent.registry.champion import read_champion_reference
from worldagent.storytest.runner import make_runner

log = logging.getLogger("evaluate")

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
    champion: Path,
    loader: Loader | None = None,
) -> tuple[dict[str, Policy | Callable[[], Policy]], list[str]]:
    """Policy factories in ``evaluate.models`` order, and notes for the report.

    ``adapters`` maps a stage name (sft, dpo, grpo) to its adapter directory; ``champion`` is the
    champion reference file.
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
            reference = read_champion_reference(champion)
            if reference["version"] is None:
                notes.append("No champion is deployed yet (first run): the champion was not evaluated.")
                continue
            label = f"{reference['family']} v{reference['version']}"
            adapter = Path(reference["artifact_path"])
            if not adapter.exists():
                raise InputError(f"{champion}: the champion ({label}) points at {adapter}, which does not exist here")
            notes.append(f"The champion is {label} ({adapter}), re-evaluated on the same intents.")
            entries[name] = hf(adapter, name)
        else:
            adapter = adapters[name]
            if not adapter.is_dir():
                raise InputError(f"{adapter}: {name} adapter not found (run the {name} stage first)")
            entries[name] = hf(adapter, name)
    return entries, notes


def run(
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
    loader: Loader | None = None,
) -> None:
    rows = load_eval_rows(eval_trajectories, params.evaluate.max_intents)
    adapters = {"sft": sft, "dpo": dpo, "grpo": grpo}
    policies, notes = build_policies(params, rows, base, adapters, champion, loader)
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


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
