from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "generated" / "world_agent"
STORIES = ROOT / "data" / "stories"
COOKIES_ID = "checkbox/checkbox.stories.tsx#essentialCookiesLocked"


def cookies_answers(eval_rows: list[dict]) -> tuple[dict, list[str]]:
    """The locked-cookies eval row and three answers to it: its reference (passes), the reference
    with another label (renders accessibly, fails the story test) and one that does not parse."""
    row = next(row for row in eval_rows if row["id"] == COOKIES_ID)
    reference = row["messages"][2]["content"]
    mislabelled = reference.replace("label: 'Essential cookies'", "label: 'Marketing cookies'")
    return row, [reference, mislabelled, reference.replace("export const", "export cnst", 1)]


def intent_result(intent_id: str, reward: float, **fields):
    """An IntentResult for ``intent_id`` (``component/...``) with ``reward``: parsed, two calls, none
    blocked, accessible, one assertion; ``fields`` override any of it."""
    from worldagent.evaluation.metrics import IntentResult

    values = dict(
        id=intent_id,
        intent="an intent",
        component=intent_id.split("/")[0],
        parsed=True,
        calls=2,
        violations=0,
        story_passed=False,
        a11y_passed=True,
        assertions_passed=0,
        assertions_total=1,
        reward=reward,
        tool_efficiency=1.0,
    )
    return IntentResult(**(values | fields))


def synthetic_report(models: dict[str, list[float]], components: tuple[str, ...] = ("avatar", "card")):
    """An EvalReport whose per-intent rewards are given; pass/a11y follow reward ≥ 0.5 / ≥ 0.3."""
    from worldagent.evaluation.metrics import EvalReport, IntentResult, ModelEval, summarize

    n = len(next(iter(models.values())))
    ids = [f"{components[i % len(components)]}/x.stories.tsx#story{i}" for i in range(n)]
    report = EvalReport(intents=ids, components=sorted(set(components)))
    for name, rewards in models.items():
        results = [
            IntentResult(
                id=ids[i],
                intent=f"intent {i}",
                component=components[i % len(components)],
                parsed=reward > 0,
                calls=4 if reward > 0 else 0,
                violations=0 if reward > 0 else 1,
                story_passed=reward >= 0.5,
                a11y_passed=reward >= 0.3,
                assertions_passed=1 if reward >= 0.5 else 0,
                assertions_total=1,
                reward=reward,
                tool_efficiency=1.0 if reward > 0 else 0.0,
                errors=[] if reward > 0 else ["no tool call in the output", "second | error"],
            )
            for i, reward in enumerate(rewards)
        ]
        report.models[name] = ModelEval(metrics=summarize(results), per_intent=results)
    return report
