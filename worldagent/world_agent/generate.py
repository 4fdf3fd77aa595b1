"""The generate stage: discovered stories → SFT trajectories and DPO preference pairs.

Every reference solution is executed through the agent environment (constraints, sandboxed
tools, story test), so each trajectory's reward comes from a real story run. Each rejected side
of a preference pair is a rule-driven degradation of the reference that the story runner
confirms scores strictly lower. The eval split holds out the stories ``generate.heldout`` names,
and on top of them intents (``generate.eval_split: intent``: some stories of every component, never
its last one) or whole components (``component``).
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any

from tqdm import tqdm

from worldagent.config import GenerateParams, RewardWeights
from worldagent.errors import InputError
from worldagent.guard import files
from worldagent.io import atomic_write_text, jsonl, pretty_json, read_text_file, sha256_bytes
from worldagent.stories.discover import StoryRecord
from worldagent.stories.errors import StoryError
from worldagent.stories.parse import DEFAULT_MAX_BYTES
from worldagent.storytest.result import StoryResult
from worldagent.storytest.reward import reward as story_reward
from worldagent.storytest.runner import StoryRunner, reference_assertions
from worldagent.tools.callformat import ToolCall, render_call, render_calls, render_response
from worldagent.world_agent.degrade import Solution, degradations
from worldagent.world_agent.environment import AgentEnvironment, Episode, episode_sandbox
from worldagent.world_agent.heldout import unstated_names
from worldagent.world_agent.prompts import ExampleStory, prompt_messages
from worldagent.world_agent.relabel import RELABEL_SUFFIX, label_mappings, label_pool, relabel
from worldagent.world_agent.retrieval import BM25Index, StoryDocument
from worldagent.world_agent.solution import module_signatures, reference_solution

log = logging.getLogger(__name__)

TRAIN_TRAJECTORIES = "trajectories.jsonl"
EVAL_TRAJECTORIES = "trajectories.eval.jsonl"
TRAIN_PREFERENCES = "dpo-preferences.jsonl"
EVAL_PREFERENCES = "dpo-preferences.eval.jsonl"
MANIFEST = "manifest.json"


class GenerateError(InputError):
    """Invalid input to the generate stage; the message names the file, line or key."""


def read_stories(path: Path) -> list[StoryRecord]:
    records: list[StoryRecord] = []
    for number, line in enumerate(read_text_file(path, "the discovered stories").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(StoryRecord.model_validate_json(line))
        except ValueError as error:
            raise GenerateError(f"{path}:{number}: invalid story record: {error}") from None
    return records


def split_components(components: Iterable[str], params: GenerateParams, seed: int) -> tuple[list[str], list[str]]:
    """(train, eval) component names; a component never appears in both."""
    names = sorted(set(components))
    if params.eval_components:
        unknown = sorted(set(params.eval_components) - set(names))
        if unknown:
            raise GenerateError(
                f"params.yaml: generate.eval_components names unknown components {unknown}; known: {names}"
            )
        held_out = sorted(set(params.eval_components))
    else:
        count = round(params.eval_fraction * len(names))
        if params.eval_fraction > 0 and len(names) > 1:
            count = min(max(count, 1), len(names) - 1)
        shuffled = list(names)
        random.Random(seed).shuffle(shuffled)
        held_out = sorted(shuffled[:count])
    return [n for n in names if n not in held_out], held_out


def heldout_ids(records: Sequence[StoryRecord], patterns: Sequence[str]) -> list[str]:
    """Ids of the stories ``generate.heldout`` names: an fnmatch pattern matches a story's id
    (``<file>#<export>``) or its file. A pattern that matches nothing is an error."""
    matched: set[str] = set()
    for pattern in patterns:
        hits = {r.id for r in records if fnmatchcase(r.id, pattern) or fnmatchcase(r.file, pattern)}
        if not hits:
            example = min((r.id for r in records), default="<file>#<export>")
            raise GenerateError(
                f"params.yaml: generate.heldout pattern {pattern!r} matches no story id or file"
                f" ({len(records)} stories; ids look like {example!r}); fix or remove it"
            )
        matched |= hits
    return sorted(matched)


def split_stories(records: Sequence[StoryRecord], params: GenerateParams, seed: int) -> tuple[list[str], list[str]]:
    """(train, eval) component names and the ids of the held-out stories; no story is in both splits.

    The stories ``generate.heldout`` names are always held out, and removed first: the split below
    is drawn from the other stories only, so the explicit set never changes which of them train.
    ``intent``: within each component, ``eval_fraction`` of its stories (at least one, never all)
    are held out, so the eval intents are unseen but their components are not. ``component``:
    whole components are held out (see ``split_components``).
    """
    explicit = heldout_ids(records, params.heldout)
    named = set(explicit)
    pool = [r for r in records if r.id not in named]
    if params.eval_split == "component":
        train_components, eval_components = split_components((r.component for r in pool), params, seed)
        drawn = [r.id for r in pool if r.component in set(eval_components)]
        return train_components, sorted({*drawn, *explicit})
    by_component: dict[str, list[str]] = {}
    for record in sorted(pool, key=lambda r: r.id):
        by_component.setdefault(record.component, []).append(record.id)
    held_out: list[str] = list(explicit)
    for component, ids in sorted(by_component.items()):
        if params.eval_fraction <= 0 or len(ids) < 2:
            continue
        count = min(max(round(params.eval_fraction * len(ids)), 1), len(ids) - 1)
        shuffled = list(ids)
        random.Random(f"{seed}:{component}").shuffle(shuffled)
        held_out.extend(sorted(shuffled[:count]))
    return sorted(by_component), sorted(held_out)


def solution_calls(solution: Solution) -> list[ToolCall]:
    """The reference tool-call sequence: styles, template, story, then run the story."""
    # A Plaited element module (`bElement`, a .tsx the story imports) is written like a template.
    calls = [
        ToolCall("writeStyles" if p.endswith(".css.ts") else "writeTemplate", {"path": p, "content": solution.files[p]})
        for p in solution.style_paths
    ]
    if solution.template_path is not None:
        calls.append(
            ToolCall(
                "writeTemplate", {"path": solution.template_path, "content": solution.files[solution.template_path]}
            )
        )
    calls.append(ToolCall("writeStory", {"path": solution.story_path, "content": solution.files[solution.story_path]}))
    calls.append(ToolCall("runStory", {"path": solution.story_path}))
    return calls


def given_files_column(given: Mapping[str, str]) -> list[dict[str, str]]:
    """The files a task starts with beyond the tokens, as a dataset column: ``[{path, content}]`` by path."""
    return [{"path": path, "content": given[path]} for path in sorted(given)]


def given_sources(row: Mapping[str, Any]) -> dict[str, str]:
    """Inverse of :func:`given_files_column` for a dataset row (rows without the column give nothing)."""
    return {str(item["path"]): str(item["content"]) for item in row.get("given_files") or []}


def story_result_dict(result: StoryResult | None) -> dict[str, Any]:
    if result is None:
        return StoryResult(
            passed=False,
            totalAssertions=0,
            passedAssertions=0,
            a11yPassed=False,
            errors=["runStory was never executed"],
        ).model_dump()
    return result.model_dump()


def episode_reward(episode: Episode, weights: RewardWeights) -> float:
    """A blocked call or a missing story run scores 0 (DESIGN §3)."""
    if episode.violations or episode.story_result is None:
        return 0.0
    return story_reward(episode.story_result, weights)


def summary_message(result: StoryResult | None) -> str:
    if result is None:
        return "The story did not run."
    verdict = "passes" if result.passed and result.a11yPassed else "fails"
    return (
        f"The story {verdict}: {result.passedAssertions}/{result.totalAssertions} assertions hold"
        f" and accessibility {'passes' if result.a11yPassed else 'fails'}."
    )


def multi_turn_messages(prompt: list[dict[str, str]], episode: Episode) -> list[dict[str, str]]:
    messages = list(prompt)
    for step in episode.steps:
        messages.append({"role": "assistant", "content": render_call(step.call)})
        messages.append({"role": "tool", "content": render_response(step.call.name, step.result.to_dict())})
    messages.append({"role": "assistant", "content": summary_message(episode.story_result)})
    return messages


def rule_ids(result: StoryResult) -> list[str]:
    """Rule ids named in a StoryResult's errors ("rule: message (target)"; "assertion: ...")."""
    return sorted({error.split(":", 1)[0].strip() for error in result.errors if ":" in error})


@dataclass
class StoryData:
    trajectories: list[dict[str, Any]] = field(default_factory=list)
    preferences: list[dict[str, Any]] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    not_applicable: Counter[str] = field(default_factory=Counter)
    reference_failure: str | None = None
    # An eval story's asserted names and descriptions with words its task never gives (policy.heldout).
    unstated: dict[str, list[str]] = field(default_factory=dict)
    relabelled: Counter[str] = field(default_factory=Counter)  # relabelled copies "kept" and "failed"


def _tokens_sources(record: StoryRecord, stories_root: Path) -> dict[str, str]:
    return {
        path: files.read_text(path, root=stories_root, max_bytes=DEFAULT_MAX_BYTES, what="a tokens file")
        for path in record.token_files
    }


class ExampleIndex:
    """The training split's stories, searchable by intent (BM25): each prompt shows the nearest ones.

    Only training stories are indexed, and a story never retrieves itself or a story with the same
    intent, so an eval prompt can never carry its own answer. Story sources longer than
    ``max_chars`` are skipped (a prompt budget, not a truncation: half a story teaches nothing).
    """

    def __init__(self, records: Sequence[StoryRecord], stories_root: Path, max_chars: int) -> None:
        self.examples: dict[str, ExampleStory] = {}
        documents = []
        for record in sorted(records, key=lambda r: r.id):
            solution = reference_solution(record, stories_root)
            source = solution.files[solution.story_path]
            if len(source) > max_chars:
                continue
            self.examples[record.id] = ExampleStory(solution.story_path, record.intent, source)
            documents.append(StoryDocument(record.id, record.intent, record.component, source))
        self.index = BM25Index(documents) if documents else None

    def nearest(self, record: StoryRecord, k: int) -> list[ExampleStory]:
        if self.index is None or k <= 0:
            return []
        query = f"{record.intent} {record.component} {record.export}"
        hits = self.index.nearest(
            query, k, exclude_ids=[record.id], exclude_intents=[record.intent], component=record.component
        )
        return [self.examples[hit.document.id] for hit in hits]


def generate_for_story(
    record: StoryRecord,
    stories_root: Path,
    split: str,
    params: GenerateParams,
    weights: RewardWeights,
    runner: StoryRunner,
    tool_schemas: Sequence[dict[str, Any]],
    examples: Sequence[ExampleStory] = (),
    labels: Mapping[str, str] | None = None,
    variant: int = 0,
    solution: Solution | None = None,
) -> StoryData:
    """The story's trajectories and verified preference pairs.

    ``labels`` (old → new, with ``variant`` its number from 1): the relabelled copy instead
    (:mod:`worldagent.world_agent.relabel`), trajectories only, its assertions derived from its own render.
    ``solution``: the story's reference solution where the caller has read it already.
    """
    data = StoryData()
    solution = solution or reference_solution(record, stories_root)
    if labels:
        record = record.model_copy(update={"intent": relabel(record.intent, labels)})
        solution = solution.replace(solution.story_path, relabel(solution.files[solution.story_path], labels))
        overlay = {**solution.given, **solution.files}
        expected = reference_assertions(stories_root / solution.story_path, record.export, stories_root, overlay)
    else:
        expected = reference_assertions(stories_root / record.file, record.export, stories_root)
    tokens = _tokens_sources(record, stories_root)
    with episode_sandbox(stories_root, record.token_files, solution.given) as sandbox:
        episode = AgentEnvironment(sandbox, runner, record.export, expected).run(solution_calls(solution))
    reference_reward = episode_reward(episode, weights)
    result = story_result_dict(episode.story_result)
    if episode.violations or not (result["passed"] and result["a11yPassed"]):
        data.reference_failure = (
            f"{record.id}: reference scores {reference_reward:.3f}: {episode.violations + result['errors']}"
        )
    if split == "eval" and not labels:
        data.unstated = unstated_names(expected, record.intent, solution.given.values())
    directory = str(PurePosixPath(record.file).parent)
    existing = {path: module_signatures(text, path) for path, text in solution.given.items()}
    # Tokens matter to the agent that writes styles; an existing component's styles already use them.
    shown_tokens = {} if solution.given else tokens
    task = (record.intent, directory, shown_tokens, record.export, solution.story_path)
    prompt = prompt_messages(tool_schemas, *task, existing=existing, examples=examples)
    multi_prompt = prompt_messages(tool_schemas, *task, "multi", existing, examples)
    base = {
        "id": f"{record.id}{RELABEL_SUFFIX}{variant}" if labels else record.id,
        "intent": record.intent,
        "component": record.component,
        "split": split,
        "given_files": given_files_column(solution.given),
        **({"relabelled": dict(labels)} if labels else {}),
    }
    calls_text = render_calls(solution_calls(solution))
    turns = ([("single", [*prompt, {"role": "assistant", "content": calls_text}])] if params.single_turn else []) + (
        [("multi", multi_turn_messages(multi_prompt, episode))] if params.multi_turn else []
    )
    for turn, messages in turns:
        data.trajectories.append(
            {**base, "turns": turn, "messages": messages, "reward": reference_reward, "storyResult": result}
        )

    example_sources = [example.source for example in examples]
    for rule in [] if labels else params.degradations:
        if len(data.preferences) >= params.max_pairs_per_story:
            break
        candidates = degradations(solution, rule, tokens, example_sources)
        if not candidates:
            data.not_applicable[rule] += 1
        for degraded in candidates:
            if len(data.preferences) >= params.max_pairs_per_story:
                break
            rejected_result = runner.run(
                stories_root / degraded.story_path,
                record.export,
                stories_root,
                expected,
                overlay={**degraded.given, **degraded.files},
            )
            rejected_reward = story_reward(rejected_result, weights)
            if not rejected_reward < reference_reward:
                data.dropped[rule] += 1
                continue
            data.preferences.append(
                {
                    **base,
                    "prompt": prompt,
                    "chosen": [{"role": "assistant", "content": calls_text}],
                    "rejected": [{"role": "assistant", "content": render_calls(solution_calls(degraded))}],
                    "degradation": rule,
                    "rejected_rules": rule_ids(rejected_result),
                    "chosen_reward": reference_reward,
                    "rejected_reward": rejected_reward,
                    "rejected_storyResult": rejected_result.model_dump(),
                }
            )
    return data


def relabelled_rows(
    record: StoryRecord,
    stories_root: Path,
    params: GenerateParams,
    weights: RewardWeights,
    runner: StoryRunner,
    tool_schemas: Sequence[dict[str, Any]],
    examples: ExampleIndex,
    pool: Sequence[str],
    seed: int,
) -> StoryData:
    """Up to ``generate.relabelled_variants`` relabelled copies of a training story that writes its
    story alone (a story that creates its component would repeat its whole template for new words);
    a copy whose reference no longer passes its story test is left out (counted ``failed``)."""
    data = StoryData()
    solution = reference_solution(record, stories_root)
    if params.relabelled_variants <= 0 or not solution.given:
        return data
    source = solution.files[solution.story_path]
    mappings = label_mappings(record.intent, source, pool, params.relabelled_variants, f"{seed}:relabel:{record.id}")
    for number, labels in enumerate(mappings, start=1):
        relabelled = record.model_copy(update={"intent": relabel(record.intent, labels)})
        shown = examples.nearest(relabelled, params.examples)
        try:
            variant = generate_for_story(
                record, stories_root, "train", params, weights, runner, tool_schemas, shown, labels, number, solution
            )
        except StoryError as error:  # the new words broke the story (a label that was also a name)
            variant = StoryData(reference_failure=f"{record.id} relabelled {labels}: {error}")
        if variant.reference_failure:
            data.relabelled["failed"] += 1
            log.info("relabelled copy left out: %s", variant.reference_failure)
            continue
        data.trajectories.extend(variant.trajectories)
        data.relabelled["kept"] += 1
    return data


@dataclass
class GeneratedDataset:
    files: dict[str, str]  # output file name -> content
    manifest: dict[str, Any]


def generate_datasets(
    records: Sequence[StoryRecord],
    stories_root: Path,
    params: GenerateParams,
    weights: RewardWeights,
    runner: StoryRunner,
    seed: int,
    tool_schemas: Sequence[dict[str, Any]],
    progress: bool = True,
) -> GeneratedDataset:
    if not records:
        raise GenerateError("no stories to generate from: the discover output is empty")
    _, eval_ids = split_stories(records, params, seed)
    held_out = set(eval_ids)
    eval_components = sorted({r.component for r in records if r.id in held_out})
    # A component is a training component when any of its stories trains (the split's own list
    # does not know that ``generate.heldout`` may take every story of one).
    train_components = sorted({r.component for r in records if r.id not in held_out})
    outputs: dict[str, list[dict[str, Any]]] = {
        name: [] for name in (TRAIN_TRAJECTORIES, EVAL_TRAJECTORIES, TRAIN_PREFERENCES, EVAL_PREFERENCES)
    }
    dropped: Counter[str] = Counter()
    not_applicable: Counter[str] = Counter()
    failures: list[str] = []
    unstated: dict[str, dict[str, list[str]]] = {}
    ordered = sorted(records, key=lambda r: r.id)
    examples = ExampleIndex([r for r in ordered if r.id not in held_out], stories_root, params.example_max_chars)
    pool = label_pool(r.intent for r in ordered if r.id not in held_out)
    relabelled: Counter[str] = Counter()
    for record in tqdm(ordered, desc="generate", unit="story", disable=not progress):
        split = "eval" if record.id in held_out else "train"
        shown = examples.nearest(record, params.examples)
        data = generate_for_story(record, stories_root, split, params, weights, runner, tool_schemas, shown)
        outputs[EVAL_TRAJECTORIES if split == "eval" else TRAIN_TRAJECTORIES].extend(data.trajectories)
        outputs[EVAL_PREFERENCES if split == "eval" else TRAIN_PREFERENCES].extend(data.preferences)
        dropped.update(data.dropped)
        not_applicable.update(data.not_applicable)
        if data.unstated:
            unstated[record.id] = data.unstated
            log.warning(
                "eval story %s asserts text its intent and given files never state (passed only by luck): %s",
                record.id,
                "; ".join(f"{name!r} ({', '.join(words)})" for name, words in data.unstated.items()),
            )
        if data.reference_failure:
            failures.append(data.reference_failure)
            log.warning("reference story does not pass its own test: %s", data.reference_failure)
        elif split == "train":
            variants = relabelled_rows(
                record, stories_root, params, weights, runner, tool_schemas, examples, pool, seed
            )
            outputs[TRAIN_TRAJECTORIES].extend(variants.trajectories)
            relabelled.update(variants.relabelled)

    # Rows are shuffled with the seed so that trainers see components interleaved, reproducibly; one
    # generator per file, so that adding held-out stories leaves the training files byte-identical.
    files: dict[str, str] = {}
    for name, rows in outputs.items():
        random.Random(f"{seed}:{name}").shuffle(rows)
        files[name] = jsonl(rows)
    manifest = {
        "seed": seed,
        "stories": len(records),
        "eval_split": params.eval_split,
        "components": {"train": train_components, "eval": eval_components},
        "eval_stories": sorted(held_out),
        "heldout_stories": heldout_ids(records, params.heldout),
        "rows": {name: len(rows) for name, rows in outputs.items()},
        "relabelled": dict(sorted(relabelled.items())),
        "pairs_dropped_by_verification": dict(sorted(dropped.items())),
        "degradations_not_applicable": dict(sorted(not_applicable.items())),
        "reference_failures": failures,
        "eval_unstated_names": unstated,
        "sha256": {name: sha256_bytes(content.encode("utf-8")) for name, content in files.items()},
    }
    return GeneratedDataset(files=files, manifest=manifest)


def write_dataset(dataset: GeneratedDataset, files: Mapping[str, Path], manifest: Path) -> None:
    """Data files (``files``: name such as ``TRAIN_TRAJECTORIES`` → path) first, the manifest last: a
    manifest on disk means the set is complete."""
    missing = sorted(set(dataset.files) - set(files))
    if missing:
        raise GenerateError(f"no output path given for {', '.join(missing)}")
    manifest.unlink(missing_ok=True)
    for name, content in dataset.files.items():
        atomic_write_text(files[name], content)
    atomic_write_text(manifest, pretty_json(dataset.manifest))
