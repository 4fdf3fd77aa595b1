"""Score model outputs on the held-out intents with the agent environment.

For every intent: parse the FunctionGemma calls, pass each call through the behavioral
constraints, execute the allowed ones in a fresh sandbox seeded with the component's design
tokens, and run the story test against the reference story's assertions — the same
``AgentEnvironment`` the generate stage and GRPO use.

Decisions (kept in one place so the report can cite them):

- **parsed** means at least one call and no parse errors. The calls the parser recovers from a
  partly malformed output are still executed (so the story columns show what happened), but its
  reward is 0, as DESIGN §3 says for unparsable output.
- **violations** counts the calls the constraints blocked; one blocked call makes the reward 0
  (``episode_reward``), whatever the story test says afterwards.
- **A model that forgets ``runStory``** (or runs a file it never wrote) is still scored: when no
  ``runStory`` call produced a story result, the last story file it successfully wrote is run once
  at the end (noted in ``errors``). When it wrote no story either, nothing runs and the intent
  scores 0 ("no story was run"). The extra run is not counted as a call.
- **The story under test** is the task's export when the written file has it, else the file's one
  story export (``AgentEnvironment.story_export``): a story is judged by what it renders, not by
  its variable name.
- **tool_efficiency** = (calls in the reference output) / (calls made, blocked ones included),
  capped at 1; 0 when the output makes no call.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from worldagent.config import RewardWeights
from worldagent.errors import InputError
from worldagent.evaluation.metrics import EvalReport, IntentResult, ModelEval, summarize
from worldagent.io import read_jsonl
from worldagent.storytest.assertions import Assertion
from worldagent.storytest.runner import StoryRunner, reference_assertions
from worldagent.tools.callformat import ToolCall, parse_calls
from worldagent.world_agent.environment import AgentEnvironment, Episode, episode_sandbox
from worldagent.world_agent.generate import episode_reward, given_sources
from worldagent.world_agent.policies import Policy

log = logging.getLogger(__name__)

MAX_ERRORS = 8
MAX_ERROR_CHARS = 200


# -- the eval split ------------------------------------------------------------------------------


def select_eval_rows(rows: Iterable[Mapping[str, Any]], max_intents: int | None = None) -> list[dict[str, Any]]:
    """Single-turn rows, one per intent id, ordered so that any prefix covers every component.

    Rows are sorted by id within each component and the components are interleaved
    (round-robin), so ``max_intents`` keeps a deterministic subset spread over the held-out
    components instead of the first component only.
    """
    by_component: dict[str, list[dict[str, Any]]] = {}
    seen: set[str] = set()
    for row in sorted((dict(r) for r in rows if r.get("turns") == "single"), key=lambda r: str(r["id"])):
        if row["id"] in seen:
            continue
        seen.add(row["id"])
        by_component.setdefault(str(row["component"]), []).append(row)
    ordered: list[dict[str, Any]] = []
    queues = [by_component[name] for name in sorted(by_component)]
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop(0))
    return ordered[:max_intents] if max_intents else ordered


def load_eval_rows(path: Path, max_intents: int | None = None) -> list[dict[str, Any]]:
    rows = select_eval_rows(read_jsonl(path, "the eval split", hint="run the generate stage first"), max_intents)
    if not rows:
        raise InputError(
            f"{path}: no single-turn rows to evaluate (run the generate stage with generate.single_turn: true)"
        )
    return rows


def prompts_of(rows: Sequence[Mapping[str, Any]]) -> list[list[dict[str, Any]]]:
    """The prompt of each row: its system and user messages."""
    return [[dict(message) for message in row["messages"][:2]] for row in rows]


def load_token_files(stories_jsonl: Path) -> dict[str, list[str]]:
    """Story id → the token files its sandbox starts with (from the discover output)."""
    rows = read_jsonl(stories_jsonl, "the discovered stories", hint="run the discover stage first")
    return {str(row["id"]): list(row.get("token_files") or []) for row in rows}


def component_token_files(stories_root: Path, component: str) -> list[str]:
    """Fallback seeding: every ``*.tokens.ts`` of the component directory."""
    directory = stories_root / component
    return (
        sorted(path.relative_to(stories_root).as_posix() for path in directory.glob("*.tokens.ts"))
        if directory.is_dir()
        else []
    )


# -- scoring ---------------------------------------------------------------------------------------


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def split_id(story_id: str) -> tuple[str, str]:
    file, sep, export = story_id.partition("#")
    if not sep or not file or not export:
        raise ValueError(f"eval row id {story_id!r} is not '<file>#<export>'")
    return file, export


def _last_written_story(episode: Episode) -> str | None:
    path: str | None = None
    for step in episode.steps:
        if step.call.name == "writeStory" and step.allowed and step.result.success:
            path = str(step.call.arguments.get("path"))
    return path


def _ran_story(episode: Episode) -> bool:
    return any(step.call.name == "runStory" and step.allowed for step in episode.steps)


class Scorer:
    """Scores outputs for eval rows; caches the reference assertions and call counts per id."""

    def __init__(
        self,
        stories_root: Path,
        runner: StoryRunner,
        weights: RewardWeights,
        token_files: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.stories_root = Path(stories_root)
        self.runner = runner
        self.weights = weights
        self.token_files = dict(token_files or {})
        self._expected: dict[str, list[Assertion]] = {}
        self._reference_calls: dict[str, int] = {}

    def with_runner(self, runner: StoryRunner) -> Scorer:
        """This scorer's stories, weights and token files with another story runner (a stricter check
        wrapping ``self.runner``); the caches start empty."""
        return Scorer(self.stories_root, runner, self.weights, self.token_files)

    def expected(self, story_id: str) -> list[Assertion]:
        if story_id not in self._expected:
            file, export = split_id(story_id)
            self._expected[story_id] = reference_assertions(self.stories_root / file, export, self.stories_root)
        return self._expected[story_id]

    def reference_calls(self, row: Mapping[str, Any]) -> int:
        story_id = str(row["id"])
        if story_id not in self._reference_calls:
            self._reference_calls[story_id] = len(parse_calls(str(row["messages"][2]["content"])).calls)
        return self._reference_calls[story_id]

    def seed_files(self, row: Mapping[str, Any]) -> list[str]:
        story_id = str(row["id"])
        if story_id in self.token_files:
            return list(self.token_files[story_id])
        return component_token_files(self.stories_root, str(row["component"]))

    def run_episode(
        self, row: Mapping[str, Any], calls: Sequence[ToolCall], hidden_assertions: bool = True
    ) -> tuple[Episode, list[str]]:
        """Run ``calls`` in a fresh sandbox; ``hidden_assertions``: the story test checks the reference
        story's assertions (scoring), else only what the agent itself can see (its self-check)."""
        notes: list[str] = []
        _, export = split_id(str(row["id"]))
        expected = self.expected(str(row["id"])) if hidden_assertions else None
        with episode_sandbox(self.stories_root, self.seed_files(row), given_sources(row)) as sandbox:
            env = AgentEnvironment(sandbox, self.runner, export, expected)
            episode = env.run(calls)
            if episode.story_result is None:
                story = _last_written_story(episode)
                if story is not None:
                    env.registry.execute(ToolCall("runStory", {"path": story}))
                    episode.story_result = env.last_story_result
                    why = (
                        "runStory never tested a written story" if _ran_story(episode) else "runStory was never called"
                    )
                    notes.append(f"{why}; ran {story} once at the end")
        return episode, notes

    def self_check(self, row: Mapping[str, Any], output: str) -> bool:
        """Whether ``output`` passes the checks the agent can run itself, without the hidden assertions:
        it parses, no call is blocked, and the story it wrote renders and passes the accessibility
        and pattern rules (what its own ``runStory`` reports)."""
        parsed = parse_calls(output)
        if not parsed.calls or parsed.errors:
            return False
        try:
            episode, _ = self.run_episode(row, parsed.calls, hidden_assertions=False)
        except Exception as error:  # as in score(): one pathological output fails its check, not the run
            log.warning("%s: self-check failed: %s", row["id"], error)
            return False
        result = episode.story_result
        return (
            all(step.allowed for step in episode.steps) and result is not None and result.passed and result.a11yPassed
        )

    def score(self, row: Mapping[str, Any], output: str) -> IntentResult:
        parsed = parse_calls(output)
        errors = [f"parse: offset {e.offset}: {e.message}" for e in parsed.errors[:3]]
        ok = bool(parsed.calls) and not parsed.errors
        if not parsed.calls:
            errors.append("no tool call in the output")
        episode: Episode | None = None
        if parsed.calls:
            try:
                episode, notes = self.run_episode(row, parsed.calls)
                errors.extend(notes)
            except Exception as error:  # one pathological output must not sink the whole run
                log.warning("%s: evaluation failed: %s", row["id"], error)
                errors.append(f"internal: {type(error).__name__}: {error}")
        blocked = [step for step in episode.steps if not step.allowed] if episode else []
        for step in blocked[:3]:
            errors.append(f"blocked {step.call.name}: " + "; ".join(step.violations))
        result = episode.story_result if episode else None
        if episode is not None and result is None:
            errors.append("no story was run")
        if result is not None:
            errors.extend(result.errors)
        reward = episode_reward(episode, self.weights) if (episode is not None and ok) else 0.0
        made = len(parsed.calls)
        efficiency = min(1.0, self.reference_calls(row) / made) if made else 0.0
        return IntentResult(
            id=str(row["id"]),
            intent=str(row["intent"]),
            component=str(row["component"]),
            parsed=ok,
            calls=made,
            violations=len(blocked),
            story_passed=bool(result and result.passed),
            a11y_passed=bool(result and result.a11yPassed),
            assertions_passed=result.passedAssertions if result else 0,
            assertions_total=result.totalAssertions if result else len(self.expected(str(row["id"]))),
            reward=reward,
            tool_efficiency=efficiency,
            errors=[_short(e) for e in errors[:MAX_ERRORS]],
        )


def evaluate_outputs(
    rows: Sequence[Mapping[str, Any]],
    outputs: Sequence[str],
    stories_root: Path,
    runner: StoryRunner,
    weights: RewardWeights,
    token_files: Mapping[str, Sequence[str]] | None = None,
    scorer: Scorer | None = None,
) -> list[IntentResult]:
    """One ``IntentResult`` per row, scoring ``outputs[i]`` as the answer to ``rows[i]``."""
    if len(rows) != len(outputs):
        raise ValueError(f"{len(outputs)} outputs for {len(rows)} eval rows")
    scorer = scorer or Scorer(stories_root, runner, weights, token_files)
    return [scorer.score(row, output) for row, output in zip(rows, outputs, strict=True)]


def evaluate_models(
    named_policies: Mapping[str, Policy | Callable[[], Policy]],
    rows: Sequence[Mapping[str, Any]],
    stories_root: Path,
    runner: StoryRunner,
    weights: RewardWeights,
    token_files: Mapping[str, Sequence[str]] | None = None,
    notes: Sequence[str] = (),
) -> EvalReport:
    """Generate with every policy on the same prompts and score the outputs.

    A value may also be a zero-argument factory returning the policy: it is called when that
    model's turn comes and dropped afterwards, so only one model is in memory at a time.
    """
    scorer = Scorer(stories_root, runner, weights, token_files)
    prompts = prompts_of(rows)
    report = EvalReport(
        intents=[str(row["id"]) for row in rows],
        components=sorted({str(row["component"]) for row in rows}),
        notes=list(notes),
    )
    for name, entry in named_policies.items():
        policy = entry if hasattr(entry, "complete") else entry()  # type: ignore[operator]
        outputs = policy.complete(prompts)
        del policy
        gc.collect()
        results = evaluate_outputs(rows, outputs, stories_root, runner, weights, scorer=scorer)
        report.models[name] = ModelEval(metrics=summarize(results), per_intent=results)
        metrics = report.models[name].metrics
        log.info(
            "%s: mean reward %.3f, story pass %.2f, parse %.2f",
            name,
            metrics.mean_reward,
            metrics.story_pass_rate,
            metrics.parse_rate,
        )
    return report
