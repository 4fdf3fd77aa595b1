"""``report.md``: the gate stage's human-readable report of the evaluation, the comparison and the gate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from worldagent.evaluation.gate import GateDecision
from worldagent.evaluation.metrics import HIGHER_IS_BETTER, LABELS, METRICS, EvalReport, ModelEval
from worldagent.evaluation.plots import METRICS_PNG, REWARDS_PNG
from worldagent.io import atomic_write_text

# -- report.md ---------------------------------------------------------------------------------------


def _num(value: float) -> str:
    return f"{value:.3f}"


def _signed(value: float) -> str:
    return f"{value:+.3f}"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _metrics_table(report: EvalReport, candidate: str | None) -> list[str]:
    lines = ["| model | " + " | ".join(LABELS[m] for m in METRICS) + " | n |", "|---|" + "---:|" * (len(METRICS) + 1)]
    for name, evaluation in report.models.items():
        label = f"**{name}** (candidate)" if name == candidate else name
        values = " | ".join(_num(getattr(evaluation.metrics, m)) for m in METRICS)
        lines.append(f"| {label} | {values} | {evaluation.metrics.n} |")
    return lines


def _comparison_section(comparison: dict[str, Any]) -> list[str]:
    candidate = comparison["candidate"]
    confidence = comparison.get("confidence", 0.95)
    lines: list[str] = []
    comparisons = comparison.get("comparisons") or {}
    order = sorted(comparisons, key=lambda name: (name != "champion", name != "base", name))  # champion first
    for name in order:
        versus = comparisons[name]
        lines.append(f"### {candidate} vs {name}")
        lines.append("")
        if versus is None:
            if name == "champion":
                lines.append("No champion is deployed yet (first run), so there is no champion to compare with.")
            else:
                lines.append(f"`{name}` was not evaluated.")
            lines.append("")
            continue
        lines.append(
            f"Difference = {candidate} − {name} over {versus['n']} paired intents, with a {confidence:.0%} paired bootstrap"
            f" interval ({comparison.get('bootstrap_samples')} resamples, seed {comparison.get('seed')})."
        )
        lines.append("")
        lines.append(f"| metric | {candidate} | {name} | difference | {confidence:.0%} CI | verdict |")
        lines.append("|---|---:|---:|---:|---|---|")
        for metric in METRICS:
            entry = versus["metrics"][metric]
            diff = entry["diff"]
            arrow = "" if HIGHER_IS_BETTER[metric] else " (lower is better)"
            lines.append(
                f"| {LABELS[metric]}{arrow} | {_num(entry['candidate'])} | {_num(entry['baseline'])} | {_signed(diff['mean'])}"
                f" | [{_signed(diff['low'])}, {_signed(diff['high'])}] | {entry['verdict']} |"
            )
        lines.append("")
    return lines


def _reference_section(comparison: dict[str, Any]) -> list[str]:
    gap = comparison.get("reference_gap")
    if not gap:
        return ["The reference outputs were not evaluated, so the distance to the upper bound is unknown.", ""]
    candidate = comparison["candidate"]
    lines = [
        "The reference outputs (the generate stage's solutions) are the upper bound; the gap is reference − candidate.",
        "",
        f"| metric | {candidate} | reference | gap | candidate / reference |",
        "|---|---:|---:|---:|---:|",
    ]
    for metric in METRICS:
        entry = gap[metric]
        ratio = f"{entry['candidate'] / entry['reference']:.0%}" if entry["reference"] else "n/a"
        lines.append(
            f"| {LABELS[metric]} | {_num(entry['candidate'])} | {_num(entry['reference'])} | {_signed(entry['gap'])} | {ratio} |"
        )
    lines.append("")
    return lines


def _gate_section(decision: GateDecision) -> list[str]:
    lines = [f"**{'PASSED' if decision.passed else 'FAILED'}**", ""]
    lines += [f"- {reason}" for reason in decision.reasons]
    lines += ["", "| check | value | threshold | passed |", "|---|---:|---:|---|"]
    for check in decision.checks:
        lines.append(
            f"| {check.name} | {_num(check.value)} | {_num(check.threshold)} | {'yes' if check.passed else 'no'} |"
        )
    lines.append("")
    return lines


def _intent_table(evaluation: ModelEval, limit: int = 40) -> list[str]:
    lines = [
        "| intent | reward | story | a11y | assertions | blocked calls | first problem |",
        "|---|---:|---|---|---:|---:|---|",
    ]
    for result in sorted(evaluation.per_intent, key=lambda r: (r.reward, r.id))[:limit]:
        problem = result.errors[0] if result.errors else ""
        lines.append(
            f"| {_cell(result.id)} | {_num(result.reward)} | {'pass' if result.story_passed else 'fail'} | {'pass' if result.a11y_passed else 'fail'}"
            f" | {result.assertions_passed}/{result.assertions_total} | {result.violations} | {_cell(problem)} |"
        )
    return lines


def render_report(
    report: EvalReport,
    comparison: dict[str, Any] | None,
    decision: GateDecision | None,
    candidate: str | None,
    images_dir: str = ".",
) -> str:
    lines = ["# World-agent evaluation report", ""]
    lines += ["## What was evaluated", ""]
    lines.append(
        f"- {len(report.intents)} held-out intents (the single-turn prompts of `trajectories.eval.jsonl`; no training row has"
        f" them) from the components: {', '.join(f'`{c}`' for c in report.components) or 'none'}."
    )
    lines.append(
        f"- Models: {', '.join(f'`{name}`' for name in report.models)}"
        + (f"; the candidate is `{candidate}`." if candidate else ".")
    )
    if "champion" not in report.models and not any("champion" in note for note in report.notes):
        lines.append("- No champion is deployed yet (first run).")
    lines.append(
        "- Each output is parsed, every call passes the behavioral constraints, the allowed calls run in a fresh sandbox and the"
        " story test runs against the reference story's assertions. Reward = 0.5·passed + 0.3·a11y + 0.2·assertions;"
        " a blocked call or unparsable output scores 0."
    )
    lines += [f"- {note}" for note in report.notes]
    lines += ["", "## Metrics", ""]
    lines += _metrics_table(report, candidate)
    lines += ["", f"![metrics per model]({images_dir}/{METRICS_PNG})", ""]
    if comparison is not None:
        lines += ["## Candidate vs champion and base", ""]
        lines += [f"- {note}" for note in comparison.get("notes", [])]
        if comparison.get("notes"):
            lines.append("")
        lines += _comparison_section(comparison)
        lines += ["## Distance from the reference (upper bound)", ""]
        lines += _reference_section(comparison)
    if decision is not None:
        lines += ["## Gate decision", ""]
        lines += _gate_section(decision)
    lines += ["## Reward per intent", "", f"![reward per intent]({images_dir}/{REWARDS_PNG})", ""]
    if candidate and candidate in report.models:
        lines += [f"### `{candidate}` per intent (lowest reward first)", ""]
        lines += _intent_table(report.models[candidate])
        lines.append("")
    return "\n".join(lines)


def write_report(
    path: Path,
    report: EvalReport,
    comparison: dict[str, Any] | None,
    decision: GateDecision | None,
    candidate: str | None,
) -> Path:
    atomic_write_text(path, render_report(report, comparison, decision, candidate))
    return path
