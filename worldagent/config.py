"""Typed view of ``params.yaml``: one pydantic model per stage section.

Every section forbids unknown keys, so a typo such as ``discover.stirct`` fails
loudly with the key's dotted path instead of silently using a default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DiscoverParams(Section):
    stories_dir: str = "data/stories"
    strict: bool = False
    max_file_bytes: int = Field(default=1_048_576, gt=0)


class RewardWeights(Section):
    passed: float = Field(default=0.5, ge=0)
    a11y: float = Field(default=0.3, ge=0)
    assertions: float = Field(default=0.2, ge=0)


class StorytestParams(Section):
    runner: Literal["python", "browser", "command"] = "python"
    chromium_path: str | None = None
    command: str | None = None
    max_component_depth: int = Field(default=64, gt=0)
    max_steps: int = Field(default=200_000, gt=0)

    @model_validator(mode="after")
    def _command_needs_command(self) -> StorytestParams:
        if self.runner == "command" and not self.command:
            raise ValueError("storytest.command is required when storytest.runner is 'command'")
        return self


class GenerateParams(Section):
    eval_fraction: float = Field(default=0.2, ge=0, lt=1)
    eval_components: list[str] = Field(default_factory=list)
    multi_turn: bool = True
    single_turn: bool = True
    degradations: list[str] = Field(
        default_factory=lambda: [
            "div-soup",
            "missing-aria",
            "no-keyboard",
            "inline-style",
            "hardcoded-color",
            "missing-label",
        ]
    )
    max_pairs_per_story: int = Field(default=6, ge=0)


class Params(Section):
    seed: int = 1234
    discover: DiscoverParams = DiscoverParams()
    generate: GenerateParams = GenerateParams()
    reward: RewardWeights = RewardWeights()
    storytest: StorytestParams = StorytestParams()


class ParamsError(ValueError):
    """params.yaml is missing, unreadable or invalid; the message names the file and key."""


def _format_validation_error(path: Path, error: ValidationError) -> str:
    lines = [f"{path}: invalid parameters"]
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"]) or "<root>"
        message = "unknown key" if item["type"] == "extra_forbidden" else item["msg"]
        lines.append(f"  {key}: {message}")
    return "\n".join(lines)


def parse_params(raw: Any, path: Path = Path("params.yaml")) -> Params:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ParamsError(f"{path}: expected a mapping at the top level, got {type(raw).__name__}")
    try:
        return Params.model_validate(raw)
    except ValidationError as error:
        raise ParamsError(_format_validation_error(path, error)) from None


def load_params(path: Path | str = "params.yaml") -> Params:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ParamsError(f"{path}: file not found (run from the project root or pass --params)") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise ParamsError(f"{path}{where}: invalid YAML: {error}") from None
    return parse_params(raw, path)
