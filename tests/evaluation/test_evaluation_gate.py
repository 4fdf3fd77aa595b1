"""Gate decisions: thresholds, non-inferiority to the champion, and the first run."""

from __future__ import annotations

from evaluation_helpers import synthetic_report

from worldagent.config import GateParams, Params
from worldagent.evaluation.compare import compare
from worldagent.evaluation.family import INTERVENTION, SPECIALISTS, WORLD_AGENT, gate_decision, world_agent_rules
from worldagent.evaluation.gate import GateDecision, NonInferiority, Threshold, decide, threshold_check
from worldagent.evaluation.metrics import ModelMetrics


def world_agent_gate(candidate: ModelMetrics, comparison: dict | None, gate: GateParams) -> GateDecision:
    """The one gate with the world agent's rules, as the gate stage calls it."""
    return gate_decision(WORLD_AGENT, world_agent_rules(gate), candidate.model_dump(), comparison)


def metrics(**overrides: float) -> ModelMetrics:
    values = dict(
        n=10,
        parse_rate=1.0,
        story_pass_rate=0.8,
        a11y_pass_rate=0.9,
        mean_reward=0.8,
        constraint_violations=0.1,
        tool_efficiency=1.0,
    )
    values.update(overrides)
    return ModelMetrics(**values)


def comparison(low: float, mean: float = 0.0, high: float = 0.1) -> dict:
    return {
        "candidate": "grpo",
        "confidence": 0.95,
        "comparisons": {
            "champion": {"metrics": {"mean_reward": {"diff": {"mean": mean, "low": low, "high": high}}}},
            "base": None,
        },
    }


def test_first_run_gates_on_thresholds_alone() -> None:
    no_champion = {"candidate": "grpo", "comparisons": {"champion": None, "base": None}}
    decision = world_agent_gate(metrics(), no_champion, GateParams(min_story_pass_rate=0.5, min_a11y_pass_rate=0.5))
    assert decision.passed
    assert [c.name for c in decision.checks] == [
        "min_story_pass_rate",
        "min_a11y_pass_rate",
        "max_constraint_violations",
    ]
    assert any("first run" in reason for reason in decision.reasons)
    assert decision.reasons[0] == "The candidate passes the gate."
    assert world_agent_gate(metrics(), None, GateParams()).passed


def test_threshold_failures_name_the_failing_check() -> None:
    params = GateParams(min_story_pass_rate=0.9, min_a11y_pass_rate=0.5, max_constraint_violations=0.05)
    decision = world_agent_gate(metrics(story_pass_rate=0.4), comparison(low=0.0), params)
    assert not decision.passed
    failed = {c.name for c in decision.checks if not c.passed}
    assert failed == {"min_story_pass_rate", "max_constraint_violations"}
    assert "fails the gate" in decision.reasons[0]
    assert any("Story pass rate 0.400 is below the minimum 0.900" in r for r in decision.reasons)
    assert any("exceed" in r for r in decision.reasons)


def test_non_inferiority_on_mean_reward() -> None:
    params = GateParams(margin=0.05)
    ok = world_agent_gate(metrics(), comparison(low=-0.04, mean=0.01), params)
    assert ok.passed
    check = next(c for c in ok.checks if c.name == "non_inferiority_mean_reward")
    assert (check.value, check.threshold, check.passed) == (-0.04, -0.05, True)
    assert any("non-inferior" in r for r in ok.reasons)

    worse = world_agent_gate(metrics(), comparison(low=-0.2, mean=-0.1, high=0.0), params)
    assert not worse.passed
    assert [c.name for c in worse.checks if not c.passed] == ["non_inferiority_mean_reward"]
    assert any("may be worse than the champion" in r for r in worse.reasons)

    # The bound must lie strictly above −margin.
    assert not world_agent_gate(metrics(), comparison(low=-0.05), params).passed


def test_gate_from_a_real_comparison() -> None:
    report = synthetic_report({"champion": [1.0] * 10, "grpo": [0.0] * 5 + [1.0] * 5})
    result = compare(report, "grpo", samples=200, seed=0)
    decision = world_agent_gate(report.models["grpo"].metrics, result, GateParams())
    assert not decision.passed  # half the intents lost: clearly inferior
    same = compare(synthetic_report({"champion": [1.0] * 10, "grpo": [1.0] * 10}), "grpo", samples=200, seed=0)
    assert world_agent_gate(metrics(), same, GateParams()).passed


def test_threshold_direction_and_missing_values() -> None:
    lower = Threshold("max_x", "X", "x", 0.5, higher_is_better=False, unit=" per intent")
    assert threshold_check(lower, 0.4)[0].passed and not threshold_check(lower, 0.6)[0].passed
    assert threshold_check(lower, 0.6)[1] == "X 0.600 per intent exceeds the maximum 0.500."
    check, sentence = threshold_check(Threshold("min_y", "Y", "y", 0.1), None)
    assert not check.passed and "undefined" in sentence
    assert threshold_check(Threshold("min_y", "Y", "y", 0.0, required=False), None)[0].passed


def test_every_family_states_its_rules_in_the_one_gate() -> None:
    params = Params()
    names = {
        family.key: [t.name for t in family.gate_rules(params).thresholds]
        for family in (WORLD_AGENT, INTERVENTION, SPECIALISTS)
    }
    assert names == {
        "world_agent": ["min_story_pass_rate", "min_a11y_pass_rate", "max_constraint_violations"],
        "intervention": ["min_f1", "min_auc"],
        "specialists": ["min_action_accuracy"],
    }
    assert WORLD_AGENT.gate_rules(params).non_inferiority == NonInferiority("Mean reward", params.gate.margin)
    assert INTERVENTION.gate_rules(params).non_inferiority == NonInferiority(
        "Accuracy", params.intervention.gate.margin
    )
    # the intervention predictor gated on a champion's accuracy difference, through the same decide()
    comparison = {
        "confidence": 0.9,
        "comparisons": {"champion": {"accuracy_diff": {"mean": -0.1, "low": -0.2, "high": 0.0}}},
    }
    decision = decide(
        {"f1": 0.9, "auc": 0.95}, INTERVENTION.gate_rules(params), INTERVENTION.champion_diff(comparison), 0.9
    )
    assert not decision.passed and [c.name for c in decision.checks if not c.passed] == ["non_inferiority_accuracy"]
    assert any("90% CI" in reason for reason in decision.reasons)
