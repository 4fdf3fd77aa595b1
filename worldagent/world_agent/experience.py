"""The experience store: scored completions that accumulate across runs, and what training takes from them.

A store is a directory (a DVC out, or a DVC-tracked folder carried from run to run)::

    experience/
      manifest.json          what is in it: sample count, runs, per-shard SHA-256 (written last)
      samples-0.jsonl ...    samples-f.jsonl: one JSON object per line, sharded by prompt hash

Bytes are deterministic: samples are sorted by ``(prompt_hash, completion_hash)`` and written as
canonical JSON, so the same experience always gives the same files (and the same DVC hash), however
it was gathered. A sample is identified by ``(prompt_hash, completion_hash)``; merging keeps the
first one seen, so provenance (``model_hash``, ``run_id``) says where a completion first came from.
The directory is replaced atomically.

From the experience: passing completions become rejection-sampling SFT rows
(:func:`rejection_sft_rows`), pass/fail completions of the same prompt become on-policy preference
pairs, and where nothing passes, reference-vs-failure pairs (:func:`preference_pairs`).
:func:`reward_variance_filter` picks the GRPO prompts whose reward varies under the current policy
(a group whose completions all score the same gives GRPO no gradient).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from worldagent.errors import InputError
from worldagent.guard import files
from worldagent.guard.text import decode_utf8
from worldagent.io import atomic_directory, canonical_json, jsonl, pretty_json, read_json, sha256_bytes

MANIFEST = "manifest.json"
FORMAT = 1
SHARD_PREFIX = "samples-"


def prompt_hash(prompt: Sequence[Mapping[str, Any]]) -> str:
    """SHA-256 of the prompt's canonical JSON (role and content of each message)."""
    return sha256_bytes(canonical_json([{"role": m["role"], "content": m["content"]} for m in prompt]).encode("utf-8"))


def completion_hash(completion: str) -> str:
    return sha256_bytes(completion.encode("utf-8"))


@dataclass(frozen=True)
class ExperienceSample:
    """One scored completion with its provenance."""

    prompt_id: str  # the task (story id) the prompt was built for
    prompt: list[dict[str, str]]
    completion: str
    reward: float
    passed: bool
    model_hash: str  # which model wrote it (e.g. the SHA-256 of its weights or its stage fingerprint)
    run_id: str  # which run sampled it
    prompt_hash: str = ""
    completion_hash: str = ""
    details: dict[str, Any] = field(default_factory=dict)  # e.g. the story result, the sampling settings

    def __post_init__(self) -> None:
        if not self.prompt_hash:
            object.__setattr__(self, "prompt_hash", prompt_hash(self.prompt))
        if not self.completion_hash:
            object.__setattr__(self, "completion_hash", completion_hash(self.completion))
        if not math.isfinite(self.reward):
            raise ValueError(f"{self.prompt_id}: reward must be a finite number, got {self.reward!r}")

    @property
    def key(self) -> tuple[str, str]:
        return (self.prompt_hash, self.completion_hash)


def samples_from_groups(
    rows: Sequence[Mapping[str, Any]],
    completions: Sequence[Sequence[str]],
    rewards: Sequence[Sequence[float]],
    *,
    pass_reward: float,
    model_hash: str,
    run_id: str,
    details: Mapping[str, Any] | None = None,
) -> list[ExperienceSample]:
    """Experience from one sampling round: ``rows[i]`` (``{id, prompt}``) was answered with
    ``completions[i]`` (a group), scored ``rewards[i]``; a completion passes at ``reward >= pass_reward``.

    Typical use: groups from :func:`worldagent.lm.rollout.generate_batched` with
    ``num_return_sequences``, rewards from ``StoryTestReward.score_text``.
    """
    if not len(rows) == len(completions) == len(rewards):
        raise ValueError(f"{len(rows)} rows, {len(completions)} completion groups and {len(rewards)} reward groups")
    samples = []
    for row, group, scores in zip(rows, completions, rewards, strict=False):
        if len(group) != len(scores):
            raise ValueError(f"{row['id']}: {len(group)} completions but {len(scores)} rewards")
        for completion, reward in zip(group, scores, strict=False):
            samples.append(
                ExperienceSample(
                    prompt_id=str(row["id"]),
                    prompt=[{"role": str(m["role"]), "content": str(m["content"])} for m in row["prompt"]],
                    completion=completion,
                    reward=float(reward),
                    passed=float(reward) >= pass_reward,
                    model_hash=model_hash,
                    run_id=run_id,
                    details=dict(details or {}),
                )
            )
    return samples


# --------------------------------------------------------------------------- the store on disk


def _sample_from_row(row: Any, where: str) -> ExperienceSample:
    if not isinstance(row, dict):
        raise InputError(f"{where}: expected a JSON object")
    required = (
        "prompt_id",
        "prompt",
        "completion",
        "reward",
        "passed",
        "model_hash",
        "run_id",
        "prompt_hash",
        "completion_hash",
    )
    missing = [name for name in required if name not in row]
    if missing:
        raise InputError(f"{where}: missing field(s) {missing}")
    try:
        sample = ExperienceSample(**{name: row[name] for name in (*required, "details") if name in row})
    except (TypeError, ValueError) as error:
        raise InputError(f"{where}: {error}") from None
    if sample.prompt_hash != prompt_hash(sample.prompt) or sample.completion_hash != completion_hash(sample.completion):
        raise InputError(f"{where}: prompt_hash/completion_hash do not match the prompt/completion (edited by hand?)")
    return sample


def read_store(store: Path) -> list[ExperienceSample]:
    """Every sample of the store at ``store``; a missing or empty directory is an empty store.

    Shards are checked against the manifest's SHA-256; a bad line is an :class:`InputError` naming
    the file and line.
    """
    store = Path(store)
    manifest_path = store / MANIFEST
    if not manifest_path.is_file():
        if store.is_dir() and any(store.glob(f"{SHARD_PREFIX}*.jsonl")):
            raise InputError(
                f"{store}: experience shards without {MANIFEST} (an interrupted write?); remove the folder"
            )
        return []
    manifest = read_json(manifest_path, "the experience manifest", expect=dict)
    if manifest.get("format") != FORMAT:
        raise InputError(f"{manifest_path}: format {manifest.get('format')!r}, expected {FORMAT}")
    samples: list[ExperienceSample] = []
    for name, digest in sorted((manifest.get("sha256") or {}).items()):
        path = store / name
        if path.is_symlink() or not path.is_file() or path.parent != store:
            raise InputError(f"{path}: listed in {MANIFEST} but not a regular file in the store")
        data = files.read_bytes(name, root=store, what="an experience shard")
        if sha256_bytes(data) != digest:
            raise InputError(f"{path}: SHA-256 differs from {MANIFEST} (edited or damaged)")
        for number, line in enumerate(decode_utf8(data, str(path)).splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"{path}:{number}: invalid JSON: {error.msg}") from None
            samples.append(_sample_from_row(row, f"{path}:{number}"))
    return samples


def merge_samples(
    previous: Iterable[ExperienceSample], new: Iterable[ExperienceSample]
) -> tuple[list[ExperienceSample], dict[str, int]]:
    """The union, deduplicated by ``(prompt_hash, completion_hash)`` (the first seen is kept), sorted."""
    merged: dict[tuple[str, str], ExperienceSample] = {}
    stats = {"previous": 0, "new": 0, "added": 0, "duplicates": 0}
    for source, samples in (("previous", previous), ("new", new)):
        for sample in samples:
            stats[source] += 1
            if sample.key in merged:
                stats["duplicates"] += 1
                continue
            merged[sample.key] = sample
            if source == "new":
                stats["added"] += 1
    return [merged[key] for key in sorted(merged)], stats


def _shard_name(sample: ExperienceSample) -> str:
    return f"{SHARD_PREFIX}{sample.prompt_hash[0]}.jsonl"


def store_files(samples: Iterable[ExperienceSample]) -> dict[str, str]:
    """File name -> content for ``samples`` (manifest included): deterministic for a set of samples."""
    ordered = sorted(samples, key=lambda s: s.key)
    shards: dict[str, list[dict[str, Any]]] = {}
    for sample in ordered:
        shards.setdefault(_shard_name(sample), []).append(asdict(sample))
    files = {name: jsonl(rows) for name, rows in sorted(shards.items())}
    runs = sorted({s.run_id for s in ordered})
    manifest = {
        "format": FORMAT,
        "samples": len(ordered),
        "prompts": len({s.prompt_hash for s in ordered}),
        "passed": sum(s.passed for s in ordered),
        "runs": {run: sum(s.run_id == run for s in ordered) for run in runs},
        "models": sorted({s.model_hash for s in ordered}),
        "sha256": {name: sha256_bytes(content.encode("utf-8")) for name, content in files.items()},
    }
    files[MANIFEST] = pretty_json(manifest)
    return files


def write_store(store: Path, samples: Iterable[ExperienceSample]) -> dict[str, Any]:
    """Replace the store at ``store`` with exactly ``samples`` (atomically); returns the manifest."""
    files = store_files(samples)
    with atomic_directory(Path(store)) as tmp:
        for name, content in files.items():
            (tmp / name).write_text(content, encoding="utf-8")
    return json.loads(files[MANIFEST])


def update_store(store: Path, new: Iterable[ExperienceSample], previous: Path | None = None) -> dict[str, int]:
    """Merge ``new`` into the experience of ``previous`` (default: ``store`` itself) and write ``store``."""
    old = read_store(previous if previous is not None else store)
    merged, stats = merge_samples(old, new)
    write_store(store, merged)
    return {**stats, "total": len(merged)}


# --------------------------------------------------------------------------- training data from experience


def _by_prompt(samples: Iterable[ExperienceSample]) -> dict[str, list[ExperienceSample]]:
    groups: dict[str, list[ExperienceSample]] = {}
    for sample in sorted(samples, key=lambda s: s.key):
        groups.setdefault(sample.prompt_hash, []).append(sample)
    return groups


def rejection_sft_rows(samples: Iterable[ExperienceSample], max_per_prompt: int = 2) -> list[dict[str, Any]]:
    """SFT rows (``{id, turns, messages, reward, source, ...}``) from passing completions: per prompt
    the best ``max_per_prompt`` by reward (ties by completion hash), so no prompt dominates."""
    rows = []
    for group in _by_prompt(samples).values():
        passing = sorted((s for s in group if s.passed), key=lambda s: (-s.reward, s.completion_hash))[:max_per_prompt]
        for sample in passing:
            rows.append(
                {
                    "id": sample.prompt_id,
                    "turns": "single",
                    "messages": [*sample.prompt, {"role": "assistant", "content": sample.completion}],
                    "reward": sample.reward,
                    "source": "experience",
                    "model_hash": sample.model_hash,
                    "run_id": sample.run_id,
                }
            )
    return rows


def preference_pairs(
    samples: Iterable[ExperienceSample],
    references: Mapping[str, str] | None = None,
    max_pairs_per_prompt: int = 2,
    reference_reward: float = 1.0,
) -> list[dict[str, Any]]:
    """DPO rows in the generate stage's format (``prompt``, ``chosen``, ``rejected`` as message lists).

    Per prompt: passing completions (best first) against failing ones (worst first), pairwise, when
    the chosen side really scores higher (``source: on-policy``). Where nothing passes and
    ``references`` has an answer for the prompt's ``prompt_id``: the reference against the worst
    failures (``source: reference``).
    """
    rows = []
    for group in _by_prompt(samples).values():
        passing = sorted((s for s in group if s.passed), key=lambda s: (-s.reward, s.completion_hash))
        failing = sorted((s for s in group if not s.passed), key=lambda s: (s.reward, s.completion_hash))
        first = group[0]
        if passing:
            pairs = [(p.completion, p.reward, f) for p, f in zip(passing, failing, strict=False) if p.reward > f.reward]
            source = "on-policy"
        elif references and first.prompt_id in references:
            reference = references[first.prompt_id]
            pairs = [(reference, reference_reward, f) for f in failing if f.completion != reference]
            source = "reference"
        else:
            continue
        for chosen, chosen_reward, rejected in pairs[:max_pairs_per_prompt]:
            rows.append(
                {
                    "id": first.prompt_id,
                    "prompt": first.prompt,
                    "chosen": [{"role": "assistant", "content": chosen}],
                    "rejected": [{"role": "assistant", "content": rejected.completion}],
                    "chosen_reward": chosen_reward,
                    "rejected_reward": rejected.reward,
                    "source": source,
                    "rejected_model_hash": rejected.model_hash,
                    "rejected_run_id": rejected.run_id,
                }
            )
    return rows


def reward_std(rewards: Sequence[float]) -> float:
    """Population standard deviation (what GRPO's group normalisation divides by)."""
    if not rewards:
        return 0.0
    mean = sum(rewards) / len(rewards)
    return math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards))


def reward_variance_filter(
    prompts: Sequence[Any], rewards_per_prompt: Sequence[Sequence[float]], min_std: float = 1e-6
) -> tuple[list[Any], dict[str, float]]:
    """The prompts whose sampled rewards vary (std > ``min_std``), in order, and a summary:
    ``{prompts, kept, frac_reward_zero_std, mean_reward, mean_std}`` (measured before training)."""
    if len(prompts) != len(rewards_per_prompt):
        raise ValueError(f"{len(prompts)} prompts but {len(rewards_per_prompt)} reward groups")
    stds = [reward_std(list(rewards)) for rewards in rewards_per_prompt]
    kept = [prompt for prompt, std in zip(prompts, stds, strict=False) if std > min_std]
    flat = [r for rewards in rewards_per_prompt for r in rewards]
    summary = {
        "prompts": len(prompts),
        "kept": len(kept),
        "frac_reward_zero_std": (sum(std <= min_std for std in stds) / len(stds)) if stds else 0.0,
        "mean_reward": (sum(flat) / len(flat)) if flat else 0.0,
        "mean_std": (sum(stds) / len(stds)) if stds else 0.0,
    }
    return kept, summary
