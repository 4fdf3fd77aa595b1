"""Per-intent evaluation results and the per-model metrics summarised from them.

Every metric is a mean over intents of a per-intent value, so the compare stage can bootstrap
any of them over the same intents (``per_intent_values``):

========================  =============================================  ==================
metric                    per-intent value                               better
========================  =============================================  ==================
``parse_rate``            1 when the output holds ≥1 call and no errors  higher
``story_pass_rate``       1 when the story test passed                   higher
``a11y_pass_rate``        1 when the accessibility rules passed          higher
``mean_reward``           the episode reward (0 when blocked/unparsed)   higher
``constraint_violations`` calls blocked by the constraints               lower
``tool_efficiency``       reference calls / calls made, capped at 1      higher
========================  =============================================  ==================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

METRICS: tuple[str, ...] = (
    "parse_rate",
    "story_pass_rate",
    "a11y_pass_rate",
    "mean_reward",
    "constraint_violations",
    "tool_efficiency",
)
HIGHER_IS_BETTER: dict[str, bool] = {name: name != "constraint_violations" for name in METRICS}
LABELS: dict[str, str] = {
    "parse_rate": "parse rate",
    "story_pass_rate": "story pass rate",
    "a11y_pass_rate": "a11y pass rate",
    "mean_reward": "mean reward",
    "constraint_violations": "constraint violations (per intent)",
    "tool_efficiency": "tool efficiency",
}


class IntentResult(BaseModel):
    """What one model's output did for one held-out intent."""

    model_config = ConfigDict(extra="forbid")

    id: str
    intent: str
    component: str
    parsed: bool
    calls: int = Field(ge=0)
    violations: int = Field(ge=0)  # calls blocked by the constraints
    story_passed: bool
    a11y_passed: bool
    assertions_passed: int = Field(ge=0)
    assertions_total: int = Field(ge=0)
    reward: float = Field(ge=0, le=1)
    tool_efficiency: float = Field(ge=0, le=1)
    errors: list[str] = Field(default_factory=list)


class ModelMetrics(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n: int = Field(ge=0)
    parse_rate: float
    story_pass_rate: float
    a11y_pass_rate: float
    mean_reward: float
    constraint_violations: float  # mean blocked calls per intent
    tool_efficiency: float


_PER_INTENT: dict[str, Callable[[IntentResult], float]] = {
    "parse_rate": lambda r: float(r.parsed),
    "story_pass_rate": lambda r: float(r.story_passed),
    "a11y_pass_rate": lambda r: float(r.a11y_passed),
    "mean_reward": lambda r: float(r.reward),
    "constraint_violations": lambda r: float(r.violations),
    "tool_efficiency": lambda r: float(r.tool_efficiency),
}


def per_intent_values(results: Sequence[IntentResult], metric: str) -> list[float]:
    """The per-intent values whose mean is ``metric`` (in the order of ``results``)."""
    try:
        value = _PER_INTENT[metric]
    except KeyError:
        raise ValueError(f"unknown metric {metric!r}; known: {list(METRICS)}") from None
    return [value(result) for result in results]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summarize(results: Sequence[IntentResult]) -> ModelMetrics:
    """Means over intents (all 0 for an empty list, with ``n = 0``)."""
    return ModelMetrics(n=len(results), **{metric: _mean(per_intent_values(results, metric)) for metric in METRICS})


class ModelEval(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metrics: ModelMetrics
    per_intent: list[IntentResult]


class EvalReport(BaseModel):
    """Every evaluated model on the same held-out intents."""

    model_config = ConfigDict(extra="forbid")

    models: dict[str, ModelEval] = Field(default_factory=dict)
    intents: list[str] = Field(default_factory=list)  # ids, in evaluation order
    components: list[str] = Field(default_factory=list)  # components of the held-out intents
    notes: list[str] = Field(default_factory=list)
