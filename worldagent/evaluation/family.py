"""What each model family tells the shared evaluate → compare → gate → deploy path.

A family is a small, declarative record (:class:`Family`): its registry family name, its gate
rules (which metrics gate, their limits, which are higher-is-better, the non-inferiority metric
and margin), where the champion difference sits in its comparison, and what goes on its model
card. The evaluation of a candidate and its champion on the same held-out set is each family's
own stage function (``worldagent.world_agent.stages`` for the world agent,
``worldagent.intervention.stages.evaluate``/``compare`` for the intervention predictor,
``SpecialistsService.evaluate_model`` for browser specialists); everything after it is shared:
:func:`worldagent.evaluation.gate.decide` and :func:`worldagent.registry.deploy.deploy`.

Adding a family is one more :class:`Family` here and its evaluate/compare functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from worldagent.config import GateParams, InterventionGateParams, Params, SpecialistsParams
from worldagent.evaluation.gate import (
    GateCheck,
    GateDecision,
    GateRules,
    NonInferiority,
    Threshold,
    decide,
    interval_text,
)
from worldagent.evaluation.metrics import HIGHER_IS_BETTER

ModelsByName = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Family:
    key: str  # "world_agent" | "intervention" | "specialists"
    # Each callable picks the family's own sections out of the run's whole params (the one place
    # that knows which sections a family's gate, registry name and model card read).
    registry_family: Callable[[Params], str]
    gate_rules: Callable[[Params], GateRules]
    champion_diff: Callable[[Mapping[str, Any]], Mapping[str, float] | None]  # from the comparison
    base_model: Callable[[Params, Mapping[str, Any]], str]  # for the model card, given the metrics file
    card_params: Callable[[Params], dict[str, Any]]
    # (metrics file, candidate) → {model name: metrics} for the card and the registry version.
    card_metrics: Callable[[Mapping[str, Any], str], dict[str, Mapping[str, Any]]]
    tags: tuple[str, ...] = ()
    intended_use: str | None = None
    higher_is_better: Mapping[str, bool] = field(default_factory=dict)


# -- the world agent ----------------------------------------------------------------------------


def world_agent_rules(gate: GateParams) -> GateRules:
    return GateRules(
        thresholds=(
            Threshold("min_story_pass_rate", "Story pass rate", "story_pass_rate", gate.min_story_pass_rate),
            Threshold("min_a11y_pass_rate", "Accessibility pass rate", "a11y_pass_rate", gate.min_a11y_pass_rate),
            Threshold(
                "max_constraint_violations",
                "Constraint violations",
                "constraint_violations",
                gate.max_constraint_violations,
                higher_is_better=False,
                unit=" per intent",
            ),
        ),
        non_inferiority=NonInferiority("Mean reward", gate.margin),
    )


def world_agent_champion_diff(comparison: Mapping[str, Any]) -> Mapping[str, float] | None:
    """The candidate − champion mean-reward difference with its CI, or None without a champion."""
    champion = (comparison.get("comparisons") or {}).get("champion")
    return dict(champion["metrics"]["mean_reward"]["diff"]) if champion else None


NEAREST = "nearest"


def above_nearest_check(comparison: Mapping[str, Any], candidate: str) -> tuple[GateCheck, str]:
    """The candidate − nearest-story mean-reward difference (compare.json's step effects) must have
    its CI wholly above 0; a comparison without it fails, saying why."""
    effect = next(
        (
            e
            for e in comparison.get("step_effects") or ()
            if e.get("model") == candidate and e.get("baseline") == NEAREST
        ),
        None,
    )
    if effect is None:
        return GateCheck(name="above_nearest", value=0.0, threshold=0.0, passed=False), (
            "The nearest-story baseline was not compared with the candidate, so it cannot show that it beats"
            " copying the nearest training story."
        )
    diff = effect["metrics"]["mean_reward"]["diff"]
    passed = diff["low"] > 0
    interval = interval_text(diff, comparison.get("confidence", 0.95))
    verdict = "beats" if passed else "does not clearly beat"
    bound = "above" if passed else "not above"
    return GateCheck(name="above_nearest", value=diff["low"], threshold=0.0, passed=passed), (
        f"Mean reward {verdict} copying the nearest training story: candidate − nearest = {interval};"
        f" the lower bound is {bound} 0."
    )


def world_agent_card_metrics(eval_summary: Mapping[str, Any], candidate: str) -> dict[str, Mapping[str, Any]]:
    """The candidate first, then champion, base, nearest (baseline) and reference, from eval.json's ``models``."""
    models = eval_summary.get("models") if isinstance(eval_summary, Mapping) else None
    if not isinstance(models, Mapping) or candidate not in models:
        return {}
    order = [candidate, "champion", "base", "nearest", "reference"]
    return {name: dict(models[name]) for name in order if isinstance(models.get(name), Mapping)}


WORLD_AGENT = Family(
    key="world_agent",
    registry_family=lambda params: params.registry.family,
    gate_rules=lambda params: world_agent_rules(params.gate),
    champion_diff=world_agent_champion_diff,
    base_model=lambda params, _metrics: params.model.base,
    card_params=lambda params: params.model_dump(mode="json"),
    card_metrics=world_agent_card_metrics,
    higher_is_better=HIGHER_IS_BETTER,
)


# -- the intervention predictor -----------------------------------------------------------------

INTERVENTION_CARD_METRICS = ("accuracy", "precision", "recall", "f1", "auc", "pr_auc", "threshold")


def intervention_rules(gate: InterventionGateParams) -> GateRules:
    return GateRules(
        thresholds=(
            Threshold("min_f1", "Test F1", "f1", gate.min_f1),
            Threshold("min_auc", "Test ROC AUC", "auc", gate.min_auc),
        ),
        non_inferiority=NonInferiority("Accuracy", gate.margin),
    )


def intervention_champion_diff(comparison: Mapping[str, Any]) -> Mapping[str, float] | None:
    champion = (comparison.get("comparisons") or {}).get("champion")
    return dict(champion["accuracy_diff"]) if champion else None


def intervention_card_metrics(metrics: Mapping[str, Any], candidate: str) -> dict[str, Mapping[str, Any]]:
    return {candidate: {key: metrics.get(key) for key in INTERVENTION_CARD_METRICS}}


INTERVENTION = Family(
    key="intervention",
    registry_family=lambda params: params.intervention.family,
    gate_rules=lambda params: intervention_rules(params.intervention.gate),
    champion_diff=intervention_champion_diff,
    base_model=lambda _params, metrics: f"open_clip:{(metrics.get('model') or {}).get('clip', 'open_clip')}",
    card_params=lambda params: params.intervention.model_dump(mode="json"),
    card_metrics=intervention_card_metrics,
    tags=("intervention-predictor", "open_clip", "browser-agent"),
    intended_use=(
        "Predicts, at each step of a browser agent's run, whether a human is about to be needed."
        " Load with `InterventionPredictor.load(path)`."
    ),
    higher_is_better={"accuracy": True, "precision": True, "recall": True, "f1": True, "auc": True, "pr_auc": True},
)


# -- browser specialists ------------------------------------------------------------------------


def specialists_rules(specialists: SpecialistsParams) -> GateRules:
    """Held-out action accuracy; with no held-out rows the check applies only to a 0 threshold."""
    limit = specialists.min_action_accuracy
    return GateRules(
        thresholds=(
            Threshold("min_action_accuracy", "Held-out action accuracy", "action_accuracy", limit, required=limit > 0),
        ),
    )


SPECIALISTS = Family(
    key="specialists",
    registry_family=lambda params: params.specialists.family_prefix,
    gate_rules=lambda params: specialists_rules(params.specialists),
    champion_diff=lambda _comparison: None,
    base_model=lambda params, _metrics: params.specialists.base_model,
    card_params=lambda params: params.specialists.model_dump(mode="json"),
    card_metrics=lambda metrics, candidate: {candidate: dict(metrics)},
    tags=("browser-specialist",),
    higher_is_better={"action_accuracy": True, "exact_match": True, "parse_rate": True},
)


def gate_decision(
    family: Family,
    rules: GateRules,
    metrics: Mapping[str, Any],
    comparison: Mapping[str, Any] | None = None,
    extra_checks: Sequence[tuple[GateCheck, str]] = (),
) -> GateDecision:
    """The one gate (:func:`worldagent.evaluation.gate.decide`) with ``rules`` (the family's, such as
    :func:`world_agent_rules`), on the candidate's ``metrics`` and the compare stage's ``comparison``
    (None or no champion: thresholds alone), where ``family`` finds the champion difference."""
    comparison = comparison or {}
    diff = family.champion_diff(comparison)
    return decide(metrics, rules, diff, comparison.get("confidence", 0.95), extra_checks)


FAMILIES: dict[str, Family] = {family.key: family for family in (WORLD_AGENT, INTERVENTION, SPECIALISTS)}


def family_named(key: str) -> Family:
    try:
        return FAMILIES[key]
    except KeyError:
        from worldagent.errors import InputError

        raise InputError(f"unknown model family {key!r}; known: {', '.join(sorted(FAMILIES))}") from None
