"""Model card (README.md) for a published adapter: YAML front matter plus Markdown. Deterministic."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")

DEFAULT_INTENDED_USE = (
    "A LoRA adapter for a small tool-calling model that writes Plaited UI stories (templates, styles, "
    "stories) from a natural-language intent using the FunctionGemma call format. It was trained and "
    "gated on the story tests of this pipeline (accessibility, Plaited patterns, assertions). "
    "Not intended for general chat or for code outside this story dialect; review generated code "
    "before shipping it."
)


def is_hub_id(name: str) -> bool:
    """Whether ``name`` looks like a Hub model id (``owner/name``), as the Hub's ``base_model`` expects."""
    return bool(_HUB_ID.match(name))


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        return f"{value:.4f}"
    if value is None:
        return "n/a"
    return str(value).replace("|", "\\|").replace("\n", " ")


def render_model_card(
    *,
    family: str,
    version: int,
    base_model: str,
    metrics: Mapping[str, Any],
    data_hash: str | None,
    git_revision: str | None,
    params: Mapping[str, Any],
    params_hash: str | None = None,
    artifact_hash: str | None = None,
    dvc_hash: str | None = None,
    candidate: str | None = None,
    tags: Sequence[str] = ("world-agent", "plaited", "function-calling", "lora", "trl"),
    intended_use: str = DEFAULT_INTENDED_USE,
) -> str:
    """Markdown with YAML front matter (``library_name: peft``, ``base_model`` when it is a Hub id, ``tags``).

    ``metrics`` may be flat (``{"mean_reward": 0.7}``) or per model (``{"grpo": {...}, "base": {...}}``);
    the table lists one row per metric, one column per model. The same inputs give the same bytes.
    """
    front: dict[str, Any] = {"library_name": "peft"}
    if is_hub_id(base_model):
        front["base_model"] = base_model
    front["tags"] = sorted({"peft", *tags})
    header = yaml.safe_dump(front, sort_keys=False, default_flow_style=False, allow_unicode=True).strip()

    lines = ["---", header, "---", "", f"# {family} v{version}", ""]
    lines.append(
        f"LoRA adapter{f' ({candidate} stage)' if candidate else ''} on `{base_model}`"
        + ("" if is_hub_id(base_model) else " (a base model built locally by the pipeline, not on the Hub)")
        + "."
    )
    lines += ["", "## Metrics", ""]
    lines += _metrics_table(metrics)
    lines += ["", "## Provenance", "", "| item | value |", "| --- | --- |"]
    for name, value in (
        ("version", f"v{version}"),
        ("git revision", git_revision),
        ("data hash (manifest.json sha256)", data_hash),
        ("params hash (sha256)", params_hash),
        ("artifact hash (sha256)", artifact_hash),
        ("DVC hash", dvc_hash),
    ):
        lines.append(f"| {name} | {f'`{value}`' if value else 'n/a'} |")
    lines += ["", "## Intended use", "", intended_use.strip(), "", "## Parameters", "", "```yaml"]
    lines.append(yaml.safe_dump(_plain(params), sort_keys=True, default_flow_style=False, allow_unicode=True).rstrip())
    lines += ["```", ""]
    return "\n".join(lines)


def _metrics_table(metrics: Mapping[str, Any]) -> list[str]:
    if not metrics:
        return ["No metrics were recorded."]
    nested = all(isinstance(v, Mapping) for v in metrics.values())
    if not nested:
        rows = ["| metric | value |", "| --- | --- |"]
        rows += [f"| {_cell(k)} | {_cell(metrics[k])} |" for k in sorted(metrics)]
        return rows
    models = list(metrics)  # keep the caller's order: candidate first, then baselines
    names = sorted({key for values in metrics.values() for key in values})
    rows = ["| metric | " + " | ".join(_cell(m) for m in models) + " |", "| --- |" + " --- |" * len(models)]
    for name in names:
        rows.append(f"| {_cell(name)} | " + " | ".join(_cell(metrics[m].get(name)) for m in models) + " |")
    return rows


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
