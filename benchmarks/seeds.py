"""How far one training stage's held-out figures move with the seed alone, or with one change of params.

    python -m benchmarks.seeds --stage grpo --seeds 7 99            # after `make pipeline` (~35 min each here)
    python -m benchmarks.seeds --stage sft --seeds 7 --threads 2 --jobs 1
    python -m benchmarks.seeds --stage grpo --seeds 7 99 --compare-only   # the table again, nothing rerun
    python -m benchmarks.seeds --stage sft --seeds 7 --compare-only --own-check   # and the own check's pick
    python -m benchmarks.seeds --stage sft --seeds 1234 --set lora.top_layers=null --threads 2 --jobs 1
    python -m benchmarks.seeds --stage experience --seeds 1234 --weeks 4 --threads 2 --jobs 1

Each seed trains the stage again from the committed run's inputs (the same upstream models and data,
through the stage's own command as dvc.yaml runs it), with params.yaml's ``seed`` changed and nothing
else, into ``--work`` (never the DVC outputs), then evaluates it with the stage's evaluation command
(its self-check retries sample with that seed too; the unconstrained second row is left out). A
persistent output (the experience store) starts as the committed run found it: the store without the
samples of the run named in the stage's committed metrics (``run_id``), so a seed of the experience
loop samples the same intents and trains on as many runs' experience as the committed one did. The
table pairs every seed's evaluation with the committed row of the same stage and of the stage before
it, with the report's paired bootstrap, so a step's effect can be read against what a seed alone moves.
``--set KEY=VALUE`` (a dotted params.yaml key, a YAML value; repeatable) changes params too: a lever
measured at the committed seed, then at other seeds, against what the seed alone moves.
``--weeks N`` runs a stage with a persistent store (the experience loop) N times in a row on it before
the evaluation, as N weekly runs would: the first is the committed run's week again, each next one
samples the next intents into the same store, and the evaluation reads the last week's adapter.
Under the table, the intents every run of the stage passes and those at least one passes. With
``--own-check`` (minutes: every kept answer's story is run again), an agent holding all those runs'
models answers each intent with the answer its ranked own check
(:func:`~worldagent.world_agent.self_check.tiered_check`) places highest, the committed run's on a
tie: its passes, and the intents where every answer reached the top rank.
docs/profiles.md ("Seeds", "Levers measured and left out") records the figures.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

from benchmarks.paths import EVAL_DIR, EVAL_TRAJECTORIES, STORIES, STORIES_DIR
from benchmarks.stages import stage_command as dvc_command
from worldagent.config import Params, load_params
from worldagent.errors import InputError, RunError, clean_errors
from worldagent.evaluation.compare import STEP_CHAIN, TRAINED_STAGES, bootstrap_diff
from worldagent.evaluation.model_eval import EvalRow, read_model_eval
from worldagent.lm.device import THREADS_ENV
from worldagent.pipeline.table import Pipeline, Stage, interpolate
from worldagent.pipeline.world_agent import PIPELINE
from worldagent.profiles import assign
from worldagent.world_agent.evaluate import load_eval_rows
from worldagent.world_agent.experience import read_store, write_store
from worldagent.world_agent.self_check import SHOWN, Level, tiered_check
from worldagent.world_agent.stages.evaluate_model import make_scorer

Override = tuple[str, Any]  # a dotted params.yaml key and its new value


def parse_override(text: str) -> Override:
    """``KEY=VALUE`` from ``--set``: a dotted params.yaml key and a YAML value (``null``, ``64``, ``[a, b]``)."""
    key, equals, value = text.partition("=")
    key = key.strip()
    if not equals or not all(key.split(".")):
        raise InputError(f"--set {text!r}: expected KEY=VALUE with a dotted params key, e.g. lora.top_layers=null")
    try:
        return key, yaml.safe_load(value)
    except yaml.YAMLError as error:
        raise InputError(f"--set {text!r}: the value is not YAML: {error}") from None


def seed_params(raw: Mapping[str, Any], seed: int, overrides: Sequence[Override] = ()) -> dict[str, Any]:
    """params.yaml's contents with ``seed`` and each override set (a key params.yaml has, as a profile
    sets it), and no unconstrained evaluation row."""
    changed = copy.deepcopy(dict(raw))
    for key, value in overrides:
        assign(changed, key, value, Path("--set"))
    changed["seed"] = seed
    changed["evaluate"] = dict(changed.get("evaluate") or {}, unconstrained_models=[])
    return changed


def variant_name(stage: str, seed: int, overrides: Sequence[str], weeks: int = 1) -> str:
    """A trained variant's row label: the stage, its seed, the ``--set`` texts and its weeks (past one)."""
    return ", ".join([f"{stage} seed {seed}", *overrides, *([f"{weeks} weeks"] if weeks > 1 else [])])


def variant_folder(seed: int, overrides: Sequence[str], weeks: int = 1) -> str:
    """A variant's scratch folder name: ``seed-N``, the ``--set`` texts in safe characters, ``weeks-N``."""
    safe = [re.sub(r"[^A-Za-z0-9._=-]", "_", text) for text in overrides]
    return "-".join([f"seed-{seed}", *safe, *([f"weeks-{weeks}"] if weeks > 1 else [])])


def stage_command(stage: Stage, params: Params, params_path: Path, moved: Mapping[str, Path]) -> list[str]:
    """The command dvc.yaml runs for ``stage``, reading ``params_path``, with the paths in ``moved``
    (table path → scratch path) replaced."""
    python, flag, entry, *words = dvc_command(stage, params)
    return [python, flag, entry, "--params", str(params_path), *(str(moved.get(word, word)) for word in words)]


def seed_commands(
    pipeline: Pipeline, stage_name: str, params: Params, params_path: Path, work: Path, weeks: int = 1
) -> list[list[str]]:
    """The stage's command (``weeks`` times: each run reads and grows the same persistent store, as
    weekly runs do) and then its evaluation's, every file they write under ``work``: the evaluation
    reads the adapter trained there, never the committed one."""
    stage, evaluation = pipeline.stage(stage_name), pipeline.stage(f"evaluate_{stage_name}")
    if weeks < 1:
        raise InputError(f"--weeks {weeks}: a stage runs at least one week")
    if weeks > 1 and not stage.persist:
        raise InputError(
            f"--weeks {weeks}: {stage_name} keeps no store between runs, so its weeks would be one run"
            " repeated; only a stage with a persistent store (experience) runs more than one"
        )
    moved = {interpolate(path, params): work / scratch_name(argument, path) for argument, path in written(stage)}
    evaluation_moved = {
        interpolate(path, params): work / f"eval-{scratch_name(argument, path)}"
        for argument, path in written(evaluation)
    }
    return [
        *[stage_command(stage, params, params_path, moved) for _ in range(weeks)],
        stage_command(evaluation, params, params_path, {**moved, **evaluation_moved}),
    ]


def persisted(stage: Stage, params: Params, work: Path) -> dict[Path, Path]:
    """Committed path → scratch path of each output DVC keeps in place before ``stage`` runs (its
    ``persist``), where :func:`seed_commands` has the stage read and write it."""
    return {
        Path(interpolate(stage.outputs[argument], params)): work / scratch_name(argument, stage.outputs[argument])
        for argument in stage.persist
    }


def committed_run_id(metrics: Path) -> str:
    """The ``run_id`` the stage's committed metrics name: the run whose samples the committed store added."""
    try:
        run_id = json.loads(metrics.read_text(encoding="utf-8")).get("run_id")
    except (OSError, json.JSONDecodeError) as error:
        raise InputError(
            f"{metrics}: cannot read the committed run's id ({error}); run `make pipeline` first"
        ) from None
    if not isinstance(run_id, str) or not run_id:
        raise InputError(f"{metrics}: no run_id, so the store the committed run read cannot be rebuilt")
    return run_id


def store_before_run(store: Path, run_id: str, scratch: Path) -> dict[str, Any]:
    """Write at ``scratch`` the experience store as run ``run_id`` found it: ``store`` without the
    samples that run added (a sample keeps the id of the run that first drew it, so the earlier runs'
    samples are as they were). Returns the manifest; the committed store is left alone."""
    samples = read_store(store)
    if not any(sample.run_id == run_id for sample in samples):
        raise InputError(f"{store}: no sample of run {run_id}; the store is not the committed run's")
    return write_store(scratch, [sample for sample in samples if sample.run_id != run_id])


def written(stage: Stage) -> list[tuple[str, str]]:
    """(argument, table path) of every file or folder ``stage`` writes."""
    plots = {argument: plot.path for argument, plot in stage.plots.items()}
    return list({**stage.outputs, **stage.reports, **stage.metrics, **plots}.items())


def scratch_name(argument: str, path: str) -> str:
    """A written path's name in a seed's folder: its argument, with the table path's suffix."""
    return f"{argument}{Path(path).suffix}"


def evaluation_output(pipeline: Pipeline, stage_name: str, work: Path) -> Path:
    """Where :func:`seed_commands` has the stage's evaluation write its model's file."""
    argument, path = next(iter(pipeline.stage(f"evaluate_{stage_name}").outputs.items()))
    return work / f"eval-{scratch_name(argument, path)}"


def previous_stage(stage: str) -> str:
    """The model the report's step table compares ``stage`` with."""
    return STEP_CHAIN[STEP_CHAIN.index(stage) - 1]


def rewards_by_intent(row: EvalRow) -> dict[str, float]:
    return {result.id: result.reward for result in row.per_intent}


def seed_table(
    rows: Mapping[str, EvalRow],
    committed: str,
    previous: str,
    samples: int = 1000,
    seed: int = 1234,
    pooled: bool = True,
) -> list[str]:
    """Markdown: each model's passes and mean reward; every other seed against the ``committed`` row
    and the ``previous`` stage's; then, when ``pooled`` (only seeds differ), the seeds' per-intent
    mean against ``previous``. Paired over the intents every model answered, with the report's bootstrap."""
    rewards = {name: rewards_by_intent(row) for name, row in rows.items()}
    ids = sorted(set.intersection(*(set(r) for r in rewards.values())))
    if not ids:
        raise InputError("the evaluations share no intent")

    def difference(label: str, a: Sequence[float], b: Sequence[float]) -> str:
        diff = bootstrap_diff(a, b, samples=samples, seed=seed)
        return f"| {label} | {diff['mean']:+.3f} [{diff['low']:+.3f}, {diff['high']:+.3f}] |"

    lines = ["| model | stories passed | mean reward |", "|---|---:|---:|"]
    for name, row in rows.items():
        passed = sum(result.story_passed for result in row.per_intent if result.id in ids)
        lines.append(f"| {name} | {passed} of {len(ids)} | {sum(rewards[name][i] for i in ids) / len(ids):.3f} |")
    lines += ["", "| difference | mean reward, 95% paired bootstrap CI |", "|---|---|"]
    seeds = [name for name in rows if name != previous]
    for name in [name for name in seeds if name != committed]:
        for other in (committed, previous):
            lines.append(
                difference(f"{name} − {other}", [rewards[name][i] for i in ids], [rewards[other][i] for i in ids])
            )
    if pooled:
        mean = [sum(rewards[name][i] for name in seeds) / len(seeds) for i in ids]
        lines.append(
            difference(f"mean of the {len(seeds)} seeds − {previous}", mean, [rewards[previous][i] for i in ids])
        )
    return lines


def pass_overlap(rows: Sequence[EvalRow]) -> tuple[int, int]:
    """Intents that every row passes and that at least one passes (by id)."""
    passed = [{result.id for result in row.per_intent if result.story_passed} for row in rows]
    return len(set.intersection(*passed)), len(set.union(*passed))


def own_check_choice(
    rows: Sequence[EvalRow],
    eval_rows: Sequence[dict[str, Any]],
    level: Level,
    tie_break: Callable[[Sequence[str], Sequence[int]], int] | None = None,
) -> tuple[int, int]:
    """Each intent answered by the row whose kept answer ``level`` ranks highest (the first row on a
    tie, or ``tie_break(answers, top-ranked indices)``'s): the chosen answers' passes, and the
    intents where every row's answer has the top rank."""
    answered = [{r.id: (r, answer) for r, answer in zip(e.per_intent, e.outputs, strict=True)} for e in rows]
    chosen_passes = all_top = 0
    for i, row in enumerate(eval_rows):
        results = [answers[str(row["id"])] for answers in answered]
        ranks = [level(i, answer) for _, answer in results]
        top = [j for j, rank in enumerate(ranks) if rank == max(ranks)]
        chosen = tie_break([answer for _, answer in results], top) if tie_break else top[0]
        chosen_passes += results[chosen][0].story_passed
        all_top += min(ranks) == SHOWN
    return chosen_passes, all_top


def run_seed(commands: Sequence[Sequence[str]], log: Path, threads: int) -> None:
    """The commands one after the other, their output in ``log``; a failure names the log."""
    environment = dict(os.environ, **{THREADS_ENV: str(threads)})
    with log.open("w", encoding="utf-8") as out:
        for command in commands:
            print(f"{command[2]} started (output: {log})", flush=True)
            done = subprocess.run(list(command), stdout=out, stderr=subprocess.STDOUT, env=environment, check=False)
            if done.returncode != 0:
                raise RunError(f"{' '.join(command[:3])} exited with {done.returncode}: see {log}")


@clean_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--params", type=Path, default=Path("params.yaml"), help="parameters file (default: params.yaml)"
    )
    parser.add_argument("--stage", choices=TRAINED_STAGES, default="grpo", help="the stage trained again")
    parser.add_argument(
        "--seeds", type=int, nargs="+", required=True, help="seeds other than params.yaml's (its own with --set)"
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="also change a params key (dotted, a YAML value), e.g. lora.top_layers=null; repeatable",
    )
    parser.add_argument(
        "--weeks",
        type=int,
        default=1,
        help="weekly runs of a stage with a persistent store (experience) before its evaluation (default 1)",
    )
    parser.add_argument("--work", type=Path, default=Path("tmp/seeds"), help="scratch folder (default: tmp/seeds)")
    parser.add_argument("--jobs", type=int, default=2, help="seeds run at once (default 2)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per seed (default 1)")
    parser.add_argument("--compare-only", action="store_true", help="read the seeds' evaluations; run nothing")
    parser.add_argument(
        "--own-check",
        action="store_true",
        help="also pick, per intent, the run whose answer the ranked own check places highest (minutes)",
    )
    args = parser.parse_args(argv)
    params = load_params(args.params)
    raw = yaml.safe_load(args.params.read_text(encoding="utf-8"))
    overrides = [parse_override(text) for text in args.overrides]
    works = {seed: args.work / args.stage / variant_folder(seed, args.overrides, args.weeks) for seed in args.seeds}
    if not args.compare_only:
        jobs, stage = [], PIPELINE.stage(args.stage)
        for seed, work in works.items():
            work.mkdir(parents=True, exist_ok=True)
            params_path = work / "params.yaml"
            changed = seed_params(raw, seed, overrides)
            params_path.write_text(yaml.safe_dump(changed, sort_keys=False), encoding="utf-8")
            variant = load_params(params_path)  # a bad --set value fails here, before hours of training
            commands = seed_commands(PIPELINE, args.stage, variant, params_path, work, args.weeks)
            for committed_path, scratch in persisted(stage, variant, work).items():
                metrics = Path(interpolate(next(iter(stage.metrics.values())), variant))
                store_before_run(committed_path, committed_run_id(metrics), scratch)
            jobs.append((commands, work / "run.log"))
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for finished in [pool.submit(run_seed, commands, log, args.threads) for commands, log in jobs]:
                finished.result()
    previous, committed = previous_stage(args.stage), f"{args.stage} seed {params.seed} (committed)"
    rows = {
        previous: read_model_eval(EVAL_DIR / f"{previous}.json", previous).rows[0],
        committed: read_model_eval(EVAL_DIR / f"{args.stage}.json", args.stage).rows[0],
    }
    for seed, work in works.items():
        name = variant_name(args.stage, seed, args.overrides, args.weeks)
        rows[name] = read_model_eval(evaluation_output(PIPELINE, args.stage, work)).rows[0]
    print("\n".join(seed_table(rows, committed, previous, pooled=not args.overrides and args.weeks == 1)))
    runs = [row for name, row in rows.items() if name != previous]
    both, either = pass_overlap(runs)
    print(f"\nStories passed by every {args.stage} run: {both}; by at least one: {either}.")
    if args.own_check:
        eval_rows = load_eval_rows(EVAL_TRAJECTORIES, params.evaluate.max_intents)
        level = tiered_check(make_scorer(params, STORIES, STORIES_DIR), eval_rows)
        passes, all_top = own_check_choice(runs, eval_rows, level)
        print(
            f"The own check's pick among the {len(runs)} runs' answers: {passes} of {len(eval_rows)} pass;"
            f" every answer reached its top rank on {all_top}."
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
