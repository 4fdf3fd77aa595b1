"""A third rank of the agent's own check, measured: the page also has the states the intent's words predict.

    python -m benchmarks.state_check                                  # the cues and what they predict (seconds)
    python -m benchmarks.state_check --rerun sft --out tmp/sft-states.json   # sft evaluated with it (~14 min)

Most failed held-out answers render and show every quoted word, and miss a state the intent asks
for in its own words (``benchmarks.state_wording``: "greyed out" for disabled, "ticked" for
checked). The agent cannot see the hidden assertions, but it can learn from the training stories
which words come with which state: a cue is a one- to three-word phrase of a training intent
(quoted names left out) that at least ``--min-support`` stories setting the state use, with at least
``--min-precision`` of the intents that use it setting the state, among the stories of components
that ever set it. Only the training stories are read (``stories.jsonl`` less the held-out ids).

By default this prints the cues and how well they predict the held-out stories' own states (true
and false predictions). ``--rerun STAGE`` evaluates a trained stage as its evaluate stage does with
a third rank above the evaluation's two (:func:`~worldagent.world_agent.self_check.tiered_check`):
the page also has every predicted state true on some element, so the answers that lack one are
answered again; it prints the pass rate next to the stage's own evaluation, paired.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

from benchmarks.intent_copy import paired_line
from benchmarks.paths import EVAL_DIR, EVAL_TRAJECTORIES, MODELS, STORIES, STORIES_DIR
from benchmarks.state_wording import split_stories, states_set
from worldagent.config import Params, load_params
from worldagent.errors import clean_errors
from worldagent.evaluation.compare import TRAINED_STAGES
from worldagent.evaluation.model_eval import ModelEvalFile, read_model_eval, write_model_eval
from worldagent.storytest.axtree import accessibility_tree
from worldagent.storytest.result import StoryResult
from worldagent.storytest.runner import StoryRunner
from worldagent.world_agent import self_check
from worldagent.world_agent.evaluate import Scorer, load_eval_rows
from worldagent.world_agent.stages import evaluate_model as evaluate_stage

_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_QUOTED = re.compile(r'"[^"]*"')
OWN, WORDS = self_check.OWN, self_check.SHOWN  # the evaluation's ranks: renders; and shows the quoted words
STATES = WORDS + 1  # the third rank: and has every state the intent's words predict


def phrases(intent: str, longest: int = 3) -> set[str]:
    """The intent's phrases of one to ``longest`` words, lower-cased, its quoted names left out."""
    words = _WORD.findall(_QUOTED.sub(" ", intent.lower()))
    return {" ".join(words[i : i + n]) for n in range(1, longest + 1) for i in range(len(words) - n + 1)}


def component_of(story: Mapping[str, Any]) -> str:
    return str(story.get("component") or str(story["id"]).split("/")[0])


@dataclass(frozen=True)
class StateCues:
    """Per state: the components whose training stories set it, and the phrases that predict it."""

    components: dict[str, frozenset[str]] = field(default_factory=dict)
    cues: dict[str, frozenset[str]] = field(default_factory=dict)

    def predict(self, component: str, intent: str) -> set[str]:
        """The states an intent for ``component`` asks for, by its words."""
        said = phrases(intent)
        return {state for state, cues in self.cues.items() if component in self.components[state] and cues & said}


def mine_state_cues(
    stories: Iterable[Mapping[str, Any]], min_support: int = 2, min_precision: float = 0.8
) -> StateCues:
    """The cues of the training ``stories``: phrases that at least ``min_support`` intents of stories
    setting a state use, and of whose intents at least ``min_precision`` set it, counted over the
    stories of the components that ever set the state."""
    stories = list(stories)
    components: dict[str, set[str]] = defaultdict(set)
    for story in stories:
        for state in states_set(story.get("args")):
            components[state].add(component_of(story))
    cues: dict[str, frozenset[str]] = {}
    for state, owners in sorted(components.items()):
        setting, using = Counter[str](), Counter[str]()
        for story in stories:
            if component_of(story) in owners:
                sets = state in states_set(story.get("args"))
                for phrase in phrases(str(story["intent"])):
                    using[phrase] += 1
                    setting[phrase] += sets
        cues[state] = frozenset(
            p for p, n in using.items() if setting[p] >= min_support and setting[p] / n >= min_precision
        )
    return StateCues({state: frozenset(owners) for state, owners in components.items()}, cues)


def prediction_counts(cues: StateCues, stories: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Predicted states against the states each story's arguments set: right, wrong and missed."""
    counts = {"stories": 0, "predicted": 0, "right": 0, "wrong": 0, "missed": 0}
    for story in stories:
        predicted, actual = cues.predict(component_of(story), str(story["intent"])), states_set(story.get("args"))
        counts["stories"] += 1
        counts["predicted"] += bool(predicted)
        counts["right"] += len(predicted & actual)
        counts["wrong"] += len(predicted - actual)
        counts["missed"] += len(actual - predicted)
    return counts


def page_states(html: str) -> set[str]:
    """The states true on some element of the rendered page (``disabled``, ``checked``...)."""
    return {state for node in accessibility_tree(html) for state, value in node.states.items() if value == "true"}


class StatesRunner:
    """A :class:`~worldagent.storytest.runner.StoryRunner` that runs ``runner``, then fails a passing
    story whose page lacks one of ``states`` (set per prompt by the check)."""

    def __init__(self, runner: StoryRunner) -> None:
        self.runner = runner
        self.states: set[str] = set()

    def run(
        self,
        story_file: Path,
        export: str,
        root: Path,
        expected: list[Any] | None = None,
        overlay: Mapping[str, str] | None = None,
    ) -> StoryResult:
        from worldagent.stories.render import render_story

        result = self.runner.run(story_file, export, root, expected, overlay)
        if not result.passed or not self.states:
            return result
        missing = self.states - page_states(render_story(Path(story_file), export, Path(root), overlay).html)
        if not missing:
            return result
        errors = [f"intent: no element is {state}" for state in sorted(missing)]
        return result.model_copy(update={"passed": False, "errors": [*result.errors, *errors]})


def states_check(scorer: Scorer, rows: Sequence[dict[str, Any]], cues: StateCues) -> self_check.Level:
    """The evaluation's ranks (as :func:`~worldagent.world_agent.self_check.tiered_check` gives them,
    written out: it reads the top rank at call time) with :data:`STATES` above them: the page shows
    the quoted words and has every predicted state."""
    own, words = self_check.row_check(scorer, rows), self_check.quoted_check(scorer, rows)
    runner = StatesRunner(self_check.QuotedPhrasesRunner(scorer.runner))
    checking = scorer.with_runner(runner)

    def level(i: int, answer: str) -> int:
        if not own(i, answer):
            return 0
        if not words(i, answer):
            return OWN
        runner.runner.intent = str(rows[i]["intent"])
        runner.states = cues.predict(str(rows[i]["component"]), str(rows[i]["intent"]))
        return STATES if checking.self_check(rows[i], answer) else WORDS

    return level


def rerun_stage(
    params: Params, stage: str, rows: Sequence[dict[str, Any]], scorer: Scorer, cues: StateCues
) -> ModelEvalFile:
    """``stage`` evaluated as its evaluate stage does, with :func:`states_check` as the own check's
    ranks (swapped in for this process only)."""
    settings = params.evaluate.model_copy(update={"self_check_words": True})
    params = params.model_copy(update={"evaluate": settings})
    with (
        mock.patch.object(self_check, "SHOWN", STATES),
        mock.patch.object(evaluate_stage, "tiered_check", lambda scorer, rows: states_check(scorer, rows, cues)),
    ):
        evaluation, _ = evaluate_stage.evaluate_model(
            params, stage, rows, scorer, base=MODELS / "base", adapter=MODELS / stage
        )
    return evaluation


def cue_table(cues: StateCues) -> str:
    lines = ["| state | components | cues |", "|---|---|---|"]
    for state, found in cues.cues.items():
        components = ", ".join(sorted(cues.components[state]))
        lines.append(f"| {state} | {components} | {', '.join(sorted(found)) or '–'} |")
    return "\n".join(lines)


@clean_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--params", type=Path, default=Path("params.yaml"))
    parser.add_argument("--eval-dir", type=Path, default=EVAL_DIR, help="the evaluate stages' files")
    parser.add_argument("--min-support", type=int, default=2, help="training stories setting the state that use a cue")
    parser.add_argument("--min-precision", type=float, default=0.8, help="share of a cue's intents setting the state")
    parser.add_argument("--rerun", choices=TRAINED_STAGES, help="re-evaluate this stage with the third rank")
    parser.add_argument("--out", type=Path, help="with --rerun: write its evaluation file here")
    args = parser.parse_args(argv)
    if args.out and not args.rerun:
        parser.error("--out goes only with --rerun STAGE")
    params = load_params(args.params)
    train, held_out = split_stories(STORIES, EVAL_TRAJECTORIES)
    cues = mine_state_cues(train, args.min_support, args.min_precision)
    print(cue_table(cues))
    counts = prediction_counts(cues, held_out)
    print(
        f"\nHeld-out stories: {counts['stories']}; a state predicted for {counts['predicted']};"
        f" predicted states right {counts['right']}, wrong {counts['wrong']}, missed {counts['missed']}."
    )
    if not args.rerun:
        return 0
    rows = load_eval_rows(EVAL_TRAJECTORIES, params.evaluate.max_intents)
    scorer = evaluate_stage.make_scorer(params, STORIES, STORIES_DIR)
    committed = read_model_eval(args.eval_dir / f"{args.rerun}.json", args.rerun).rows[0]
    evaluation = rerun_stage(params, args.rerun, rows, scorer, cues)
    if args.out:
        write_model_eval(args.out, evaluation)
    rerun = evaluation.rows[0]
    if rerun.self_check:
        print(rerun.self_check.note(f"{args.rerun}, states ranked"))
    changed = sum(a != b for a, b in zip(rerun.outputs, committed.outputs, strict=True))
    print(f"{changed} of {len(rerun.outputs)} kept answers differ from the committed evaluation's")
    print(paired_line(f"{args.rerun}, states ranked", rerun, committed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
