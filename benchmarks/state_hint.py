"""States named in the prompt, measured: SFT and its evaluation with a line under each request naming
the states its words predict.

    python -m benchmarks.state_hint --out tmp/state-hint                        # the committed seed (~1 h)
    python -m benchmarks.state_hint --out tmp/state-hint-7 --seed 7 --baseline tmp/seeds/sft/seed-7/eval-out.json
    python -m benchmarks.state_hint --out tmp/state-hint --data-only             # the datasets only (seconds)

Most failed held-out answers miss a state the intent asks for in its own words ("greyed out",
"ticked", "cannot be turned off"; ``benchmarks.state_wording``), and answering again does not bring
it: with a rank of the own check that asks for those states, 2 of 103 retries wrote one
(``benchmarks.state_check --rerun sft``). This benchmark gives the model the cues instead of checking
for them: under the request line of each prompt, ``States these words usually ask for: disabled.``
when the cues of ``benchmarks.state_check`` (phrases that training intents setting a state use)
predict any. A training row's cues are mined from the other training stories (leave its story out,
its relabelled copies with it), so training hints are as often wrong as held-out ones; a held-out
row's from every training story. ``--min-support 3 --min-precision 0.8`` are the cue settings with
the best leave-one-out predictions over the training stories (47 states right, 17 wrong; the held-out
stories were not read to choose them). It then trains SFT on the hinted trajectories with the stage's
own command and params (``--seed`` another seed), evaluates it on the hinted held-out prompts and pairs
the result with ``--baseline``, an SFT evaluation of the same seed without hints. It is not in the
pipeline, because the model did not follow the line and did worse on both seeds (docs/profiles.md,
"The states the words predict, named in the prompt": 20 of 67 against 24 for each).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.intent_last import rewrite_trajectories, seeded_params, sft_and_paired, sft_benchmark_parser
from benchmarks.paths import EVAL_TRAJECTORIES, STORIES, TRAJECTORIES
from benchmarks.state_check import StateCues, component_of, mine_state_cues
from benchmarks.state_wording import split_stories
from worldagent.errors import InputError, clean_errors
from worldagent.world_agent.relabel import RELABEL_SUFFIX

Predict = Callable[[Mapping[str, Any]], set[str]]  # a trajectory row -> the states its hint names


def hint_line(states: Iterable[str]) -> str:
    return f"States these words usually ask for: {', '.join(sorted(states))}."


def story_id(row: Mapping[str, Any]) -> str:
    """The story a trajectory row was written from (a relabelled copy's id ends ``~relabel-N``)."""
    return str(row["id"]).split(RELABEL_SUFFIX, 1)[0]


def hinted_row(row: Mapping[str, Any], states: set[str]) -> dict[str, Any]:
    """``row`` with :func:`hint_line` under the request line of its first user message; as it was when
    ``states`` is empty. The request must open that message (as generate writes it)."""
    if not states:
        return dict(row)
    intent = str(row.get("intent") or "")
    messages = [dict(message) for message in row["messages"]]
    user = next((m for m in messages if m.get("role") == "user"), None)
    if user is None or not intent or not str(user["content"]).startswith(intent + "\n"):
        raise InputError(f"trajectory {row.get('id')!r}: its first user message does not open with its intent")
    content = str(user["content"])
    user["content"] = f"{intent}\n{hint_line(states)}{content[len(intent) :]}"
    return {**row, "messages": messages}


def leave_one_out(stories: Sequence[Mapping[str, Any]], min_support: int, min_precision: float) -> Predict:
    """Predicts a training row's states from the cues of every training story but its own."""
    cues: dict[str, StateCues] = {
        str(story["id"]): mine_state_cues(
            [other for other in stories if other["id"] != story["id"]], min_support, min_precision
        )
        for story in stories
    }

    def predict(row: Mapping[str, Any]) -> set[str]:
        found = cues.get(story_id(row))
        if found is None:
            raise InputError(f"trajectory {row.get('id')!r}: its story {story_id(row)!r} is not a training story")
        return found.predict(component_of(row), str(row["intent"]))

    return predict


def from_all(stories: Sequence[Mapping[str, Any]], min_support: int, min_precision: float) -> Predict:
    """Predicts a held-out row's states from the cues of every training story."""
    cues = mine_state_cues(stories, min_support, min_precision)
    return lambda row: cues.predict(component_of(row), str(row["intent"]))


def write_hinted(source: Path, target: Path, predict: Predict) -> Counter[str]:
    """Rewrite a trajectories file with hints; counts rows hinted and kept."""

    def hinted(row: Mapping[str, Any]) -> dict[str, Any] | None:
        states = predict(row)
        return hinted_row(row, states) if states else None

    counts = rewrite_trajectories(source, target, hinted)
    return Counter(hinted=counts["changed"], kept=counts["kept"])


@clean_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = sft_benchmark_parser(__doc__.splitlines()[0], "write the hinted trajectories and stop", seeds=True)
    parser.add_argument("--min-support", type=int, default=3, help="training stories setting the state that use a cue")
    parser.add_argument("--min-precision", type=float, default=0.8, help="share of a cue's intents setting the state")
    args = parser.parse_args(argv)
    for source in (TRAJECTORIES, EVAL_TRAJECTORIES, STORIES):
        if not source.is_file():
            raise InputError(f"{source}: not found; run `make pipeline` (or `dvc repro generate`) first")
    stories, _ = split_stories(STORIES, EVAL_TRAJECTORIES)
    data = args.out / "data"
    for source, predict in (
        (TRAJECTORIES, leave_one_out(stories, args.min_support, args.min_precision)),
        (EVAL_TRAJECTORIES, from_all(stories, args.min_support, args.min_precision)),
    ):
        counts = write_hinted(source, data / source.name, predict)
        print(f"{source}: {counts['hinted']} rows hinted, {counts['kept']} kept", flush=True)
    if args.data_only:
        return 0
    sft_and_paired(
        seeded_params(args.params, args.seed, args.out),
        args.out,
        data / TRAJECTORIES.name,
        data / EVAL_TRAJECTORIES.name,
        "state_hint",
        args.baseline,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
