"""evaluate stage: the eval split + base/sft/dpo/grpo/champion/reference → reports/world_agent/ eval files.

`python -m tasks.evaluate` is the command in dvc.yaml; `evaluate_task` is the Prefect task that
runs the same stage through DVC.

Models: ``base`` is models/world_agent/base alone, ``sft``/``dpo``/``grpo`` are that stage's adapter
(``load_policy`` merges the adapter's parent chain), ``champion`` is the registry's champion
alias re-evaluated on the same intents (skipped with a note when there is none: the first run),
``reference`` is the generate stage's solutions (the upper bound). Models load one at a time.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prefect import task

from tasks._stage import dvc_repro, stage_main
from tasks.discover import STORIES_OUT
from worldagent.config import Params
from worldagent.evaluation.evaluate import evaluate_models, load_eval_rows, load_token_files
from worldagent.evaluation.policies import HFPolicy, Policy, ReferencePolicy
from worldagent.evaluation.report import REPORT_DIR, write_eval_outputs
from worldagent.storytest.runner import make_runner

EVAL_ROWS = Path("data/generated/world_agent/trajectories.eval.jsonl")
MODELS_DIR = Path("models/world_agent")
log = logging.getLogger("evaluate")

# (base_dir, adapter_dir or None) -> (model, tokenizer); the default is worldagent.policy.load.load_policy.
Loader = Callable[[Path, "Path | None"], tuple[Any, Any]]
# (params, root) -> (adapter dir, label such as "v3") of the deployed champion, or None.
ChampionResolver = Callable[[Params, Path], "tuple[Path, str] | None"]


def default_loader(base_dir: Path, adapter_dir: Path | None) -> tuple[Any, Any]:
    from worldagent.policy.load import load_policy

    return load_policy(base_dir, adapter_dir)


def registry_champion(params: Params, root: Path) -> tuple[Path, str] | None:
    """The champion alias of ``registry.family`` from the model registry, or None."""
    from worldagent.registry.api import open_registry
    from worldagent.registry.deploy import resolve_registry_url

    with open_registry(resolve_registry_url(params.registry.url, root)) as registry:
        version = registry.get_alias(params.registry.family, "champion")
    if version is None:
        return None
    path = Path(version.artifact_path)
    return (path if path.is_absolute() else root / path), f"{params.registry.family} {version.label}"


def build_policies(
    params: Params,
    root: Path,
    rows: list[dict[str, Any]],
    loader: Loader | None = None,
    champion: ChampionResolver | None = None,
) -> tuple[dict[str, Policy | Callable[[], Policy]], list[str]]:
    """Policy factories in ``evaluate.models`` order, and notes for the report."""
    loader = loader or default_loader
    champion = champion or registry_champion
    base_dir = root / MODELS_DIR / "base"
    notes: list[str] = []
    entries: dict[str, Policy | Callable[[], Policy]] = {}

    def hf(adapter: Path | None, name: str) -> Callable[[], Policy]:
        def make() -> Policy:
            model, tokenizer = loader(base_dir, adapter)
            return HFPolicy(model, tokenizer, max_new_tokens=params.evaluate.max_new_tokens, batch_size=params.evaluate.batch_size,
                            progress=sys.stderr.isatty(), desc=f"evaluate {name}")

        return make

    for name in params.evaluate.models:
        if name == "reference":
            entries[name] = ReferencePolicy(rows)
        elif name == "base":
            if not base_dir.is_dir():
                raise ValueError(f"{base_dir}: base model not found (run the base stage first)")
            entries[name] = hf(None, name)
        elif name == "champion":
            found = champion(params, root)
            if found is None:
                notes.append("No champion is deployed yet (first run): the champion was not evaluated.")
                continue
            adapter, label = found
            if not adapter.exists():
                raise ValueError(f"the champion ({label}) points at {adapter}, which does not exist")
            candidate_dir = root / MODELS_DIR / params.compare.candidate
            if candidate_dir.exists() and adapter.resolve() == candidate_dir.resolve():
                log.warning("the champion's artifact %s is the candidate's own output directory: it no longer holds the deployed weights", adapter)
                notes.append(f"Warning: the champion ({label}) points at the candidate's directory {adapter}, so it was re-evaluated on the new weights.")
            notes.append(f"The champion is {label} ({adapter}), re-evaluated on the same intents.")
            entries[name] = hf(adapter, name)
        else:
            adapter = root / MODELS_DIR / name
            if not adapter.is_dir():
                raise ValueError(f"{adapter}: {name} adapter not found (run the {name} stage first)")
            entries[name] = hf(adapter, name)
    return entries, notes


def run(params: Params, root: Path, loader: Loader | None = None, champion: ChampionResolver | None = None) -> None:
    rows = load_eval_rows(root / EVAL_ROWS, params.evaluate.max_intents)
    token_files = load_token_files(root / STORIES_OUT)
    policies, notes = build_policies(params, root, rows, loader, champion)
    report = evaluate_models(
        policies,
        rows,
        stories_root=root / params.discover.stories_dir,
        runner=make_runner(params.storytest),
        weights=params.reward,
        token_files=token_files,
        notes=notes,
    )
    write_eval_outputs(report, root / REPORT_DIR)
    for name, evaluation in report.models.items():
        m = evaluation.metrics
        log.info(
            "%-9s reward %.3f  story %.2f  a11y %.2f  parse %.2f  violations %.2f  efficiency %.2f  (n=%d)",
            name, m.mean_reward, m.story_pass_rate, m.a11y_pass_rate, m.parse_rate, m.constraint_violations, m.tool_efficiency, m.n,
        )


@task(name="evaluate", retries=0)
def evaluate_task(root: Path = Path(".")) -> list[str]:
    return dvc_repro("evaluate", root)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
