"""GRPO reward: the completion's tool calls run through the constraints, the sandbox and the story test.

A completion is scored the way evaluation scores it: parse the FunctionGemma calls (malformed or
no calls → 0), run them in a fresh sandbox seeded with the component's design tokens (and, for a
story of an existing component, its styles and template module: the ``given_files`` column), every call
passing the behavioral constraints first (a blocked call → 0), and ``runStory`` tests the story
against the assertions derived from the reference story. The reward is
``generate.episode_reward`` (the weights in ``params.yaml``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from worldagent.config import RewardWeights, StorytestParams
from worldagent.storytest.assertions import Assertion
from worldagent.storytest.runner import StoryRunner, make_runner, reference_assertions
from worldagent.tools.callformat import ToolCall, parse_calls
from worldagent.world_agent.environment import AgentEnvironment, episode_sandbox
from worldagent.world_agent.generate import episode_reward, given_sources

log = logging.getLogger(__name__)


def completion_text(completion: Any) -> str:
    """A completion as text: a string, or a conversational ``[{"role": "assistant", "content": ...}]``."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return str(completion.get("content") or "")
    if isinstance(completion, Sequence):
        return "".join(
            completion_text(message)
            for message in completion
            if not isinstance(message, dict) or message.get("role", "assistant") == "assistant"
        )
    return ""


def parse_completion(text: str) -> list[ToolCall] | None:
    """The calls in ``text``, or None when the output is unparsable or has no calls."""
    parsed = parse_calls(text)
    if parsed.errors or not parsed.calls:
        return None
    return parsed.calls


class StoryTestReward:
    """A trl reward function: ``(prompts, completions, id, **columns) -> list[float]``.

    ``id`` is the story id column (``"<file>#<export>"``, file relative to ``stories_root``).
    When trl hands over ``completion_ids`` and a tokenizer is set, the text is decoded from the ids
    with special tokens kept: trl's own decoding drops special tokens, and the FunctionGemma call
    markers may be special tokens of the policy's tokenizer.
    """

    __name__ = "story_test"

    def __init__(
        self,
        stories_root: Path,
        runner: StoryRunner | None = None,
        weights: RewardWeights | None = None,
        tokenizer: Any = None,
    ) -> None:
        self.stories_root = Path(stories_root)
        self.runner = runner or make_runner("python")
        self.weights = weights or RewardWeights()
        self.tokenizer = tokenizer
        self._expected: dict[str, list[Assertion]] = {}

    def _story(self, story_id: str) -> tuple[str, str]:
        file, sep, export = str(story_id).rpartition("#")
        if not sep or not file or not export:
            raise ValueError(f"story id {story_id!r} is not '<file>#<export>'")
        return file, export

    def expected(self, story_id: str) -> list[Assertion]:
        if story_id not in self._expected:
            file, export = self._story(story_id)
            self._expected[story_id] = reference_assertions(self.stories_root / file, export, self.stories_root)
        return self._expected[story_id]

    def given_files(self, story_id: str) -> list[str]:
        """The component's design tokens (``*.tokens.ts``), relative to the stories root."""
        file, _ = self._story(story_id)
        component = PurePosixPath(file).parent
        return sorted(
            (component / path.name).as_posix() for path in (self.stories_root / component).glob("*.tokens.ts")
        )

    def score_text(self, text: str, story_id: str, given: Mapping[str, str] | None = None) -> float:
        calls = parse_completion(text)
        if calls is None:
            return 0.0
        _, export = self._story(story_id)
        expected = self.expected(story_id)
        with episode_sandbox(self.stories_root, self.given_files(story_id), given) as sandbox:
            episode = AgentEnvironment(sandbox, self.runner, export, expected).run(calls)
        return float(episode_reward(episode, self.weights))

    def _texts(self, completions: Sequence[Any], completion_ids: Sequence[Sequence[int]] | None) -> list[str]:
        if self.tokenizer is not None and completion_ids is not None and len(completion_ids) == len(completions):
            return [self.tokenizer.decode(list(ids), skip_special_tokens=False) for ids in completion_ids]
        return [completion_text(completion) for completion in completions]

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        id: Sequence[str],  # noqa: A002 - the dataset column trl passes by name
        completion_ids: Sequence[Sequence[int]] | None = None,
        given_files: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> list[float]:
        if len(id) != len(completions):
            raise ValueError(f"{len(completions)} completions but {len(id)} story ids")
        givens = (
            [given_sources({"given_files": json.loads(g) if isinstance(g, str) else g}) for g in given_files]
            if given_files
            else [{}] * len(id)
        )
        texts = self._texts(completions, completion_ids)
        return [self.score_text(text, story_id, given) for text, story_id, given in zip(texts, id, givens, strict=True)]


def story_test_reward(
    prompts: Sequence[Any],
    completions: Sequence[Any],
    id: Sequence[str],  # noqa: A002
    *,
    stories_root: Path = Path("data/stories"),
    runner: StoryRunner | None = None,
    weights: RewardWeights | None = None,
    **kwargs: Any,
) -> list[float]:
    """One-shot form of :class:`StoryTestReward` (the trainer uses an instance, which caches)."""
    return StoryTestReward(stories_root, runner, weights)(prompts, completions, id, **kwargs)


@dataclass(frozen=True)
class RewardSetup:
    """What the story-test reward depends on: ``reward``'s weights and ``storytest``'s runner (params.yaml)."""

    weights: RewardWeights
    storytest: StorytestParams

    def story_test_reward(
        self, stories_root: Path, tokenizer: Any, runner: StoryRunner | None = None
    ) -> StoryTestReward:
        """The reward over ``stories_root`` (``runner``: the one ``storytest`` asks for when None)."""
        return StoryTestReward(Path(stories_root), runner or make_runner(self.storytest), self.weights, tokenizer)
