"""Which held-out stories each of several evaluations passes, and how many any of them reaches.

The pass set moves between seeds and levers by more than most levers move its size (docs/profiles.md,
"Seeds"). This reads any number of per-model evaluation files (``reports/world_agent/eval/<model>.json``
or a benchmark's scratch evaluation; each file's first row, the constrained one) and prints each
file's passes, the stories every file passes and those at least one passes, and how many files pass
each story. The union is a ceiling: an agent holding every one of those models, and told which
answer passes the hidden test, would pass that many. With ``--own-check`` (minutes: every answer's
story is run again) the agent is told nothing: it keeps, per intent, the answer its ranked own check
(:func:`~worldagent.world_agent.self_check.tiered_check`) places highest, the first file's on a tie;
``--agreement`` breaks that tie by agreement instead (minimum Bayes risk, self-consistency): among
the answers of the top rank, the one whose text is most like all the others'.

    python -m benchmarks.pass_sets reports/world_agent/eval/{sft,experience,dpo,grpo}.json
    python -m benchmarks.pass_sets reports/world_agent/eval/sft.json tmp/seeds/sft/seed-7/eval-out.json --own-check
    python -m benchmarks.pass_sets reports/world_agent/eval/sft.json tmp/samples/seed-*.json --own-check --agreement
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from difflib import SequenceMatcher
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.paths import EVAL_TRAJECTORIES, STORIES, STORIES_DIR
from benchmarks.seeds import own_check_choice
from worldagent.config import load_params
from worldagent.errors import InputError, clean_errors
from worldagent.evaluation.model_eval import EvalRow, read_model_eval
from worldagent.world_agent.self_check import Level


def first_row(path: Path) -> EvalRow:
    """The first (constrained) row of the evaluation file at ``path``; a file with none is an error."""
    evaluation = read_model_eval(path)
    if not evaluation.rows:
        raise InputError(f"{path}: holds no evaluated row ({evaluation.model} was not evaluated)")
    return evaluation.rows[0]


def passes_per_story(rows: Sequence[EvalRow]) -> Counter[int]:
    """How many stories are passed by exactly k of ``rows``, for each k from 0 to ``len(rows)``."""
    counts = Counter(
        sum(result.story_passed for result in results) for results in zip(*(r.per_intent for r in rows), strict=True)
    )
    return Counter({k: counts.get(k, 0) for k in range(len(rows) + 1)})


def same_intents(rows: dict[str, EvalRow]) -> None:
    """Raise naming the first file whose intents differ from the first file's (their order included)."""
    (first, reference), *others = rows.items()
    ids = [result.id for result in reference.per_intent]
    for name, row in others:
        if [result.id for result in row.per_intent] != ids:
            raise InputError(f"{name}: evaluates other intents than {first}; pass sets compare the same intents")


def table(rows: dict[str, EvalRow]) -> list[str]:
    """The report's lines: a row per file, then the every/any line and the per-story histogram."""
    total = len(next(iter(rows.values())).per_intent)
    lines = ["| evaluation | stories passed | mean reward |", "|---|---:|---:|"]
    for name, row in rows.items():
        passed = sum(result.story_passed for result in row.per_intent)
        lines.append(f"| {name} | {passed} of {total} | {row.metrics.mean_reward:.3f} |")
    histogram = passes_per_story(list(rows.values()))
    every, anyone = histogram[len(rows)], total - histogram[0]
    lines += ["", f"Passed by every file: {every}; by at least one: {anyone} of {total} ({anyone / total:.3f})."]
    lines.append("Stories by how many files pass them: " + ", ".join(f"{k}: {n}" for k, n in histogram.items()) + ".")
    return lines


def most_agreed(answers: Sequence[str], candidates: Sequence[int]) -> int:
    """The candidate (an index into ``answers``) whose text is most like every other answer's, summed
    over them (difflib's ratio); the earliest on a tie."""

    def agreement(j: int) -> float:
        matcher = SequenceMatcher(None, "", answers[j], autojunk=False)  # the second text's index is kept
        total = 0.0
        for k, other in enumerate(answers):
            if k != j:
                matcher.set_seq1(other)
                total += matcher.ratio()
        return total

    scores = {j: agreement(j) for j in candidates}
    return max(candidates, key=lambda j: (scores[j], -j))


def agreement_choice(rows: Sequence[EvalRow], eval_rows: Sequence[dict[str, Any]], level: Level) -> int:
    """Passes when each intent keeps, among the answers ``level`` ranks highest, the one most like
    all the rows' answers (:func:`most_agreed`)."""
    return own_check_choice(rows, eval_rows, level, tie_break=most_agreed)[0]


@clean_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("evaluations", type=Path, nargs="+", help="per-model evaluation files (two or more)")
    parser.add_argument("--params", type=Path, default=Path("params.yaml"), help="parameters file (--own-check)")
    parser.add_argument(
        "--own-check", action="store_true", help="also pick, per intent, the answer the ranked own check places highest"
    )
    parser.add_argument(
        "--agreement",
        action="store_true",
        help="with --own-check: also break its ties by the answer most like the others (minimum Bayes risk)",
    )
    args = parser.parse_args(argv)
    if len(args.evaluations) < 2:
        parser.error("give two or more evaluation files")
    if args.agreement and not args.own_check:
        parser.error("--agreement breaks the own check's ties: give --own-check too")
    rows = {str(path): first_row(path) for path in args.evaluations}
    same_intents(rows)
    print("\n".join(table(rows)))
    if args.own_check:
        from worldagent.world_agent.evaluate import load_eval_rows
        from worldagent.world_agent.self_check import tiered_check
        from worldagent.world_agent.stages.evaluate_model import make_scorer

        params = load_params(args.params)
        ids = [result.id for result in next(iter(rows.values())).per_intent]
        eval_rows = [row for row in load_eval_rows(EVAL_TRAJECTORIES) if str(row["id"]) in set(ids)]
        if [str(row["id"]) for row in eval_rows] != ids:
            raise InputError(f"{EVAL_TRAJECTORIES}: does not hold the evaluated intents in their order")
        level = cache(tiered_check(make_scorer(params, STORIES, STORIES_DIR), eval_rows))  # each answer run once
        passes, all_top = own_check_choice(list(rows.values()), eval_rows, level)
        print(
            f"The own check's pick among the {len(rows)} files' answers: {passes} of {len(ids)} pass;"
            f" every answer reached its top rank on {all_top}."
        )
        if args.agreement:
            agreed = agreement_choice(list(rows.values()), eval_rows, level)
            print(f"Its ties broken by agreement (the answer most like the others): {agreed} of {len(ids)} pass.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
