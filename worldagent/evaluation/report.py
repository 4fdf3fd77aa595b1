"""``report.md``: the gate stage's human-readable report of the evaluation, the comparison and the gate."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from worldagent.evaluation.gate import GateDecision
from worldagent.evaluation.metrics import HIGHER_IS_BETTER, LABELS, METRICS, EvalReport, ModelEval
from worldagent.evaluation.model_eval import UNCONSTRAINED
from worldagent.evaluation.plots import METRICS_PNG, REWARDS_PNG
from worldagent.io import atomic_write_text

# The results table's rows, in this order (only those evaluated), and its columns.
ROW_ORDER: tuple[str, ...] = ("base", "nearest", "sft", "experience", "dpo", "grpo", "champion", "reference")
RESULT_METRICS: tuple[str, ...] = ("parse_rate", "a11y_pass_rate", "story_pass_rate", "mean_reward")
ROW_LABELS: dict[str, str] = {
    "nearest": "nearest (copy the nearest training story)",
    "reference": "reference (upper bound)",
}

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


def _results_table(report: EvalReport, candidate: str | None) -> list[str]:
    """base, nearest, each stage, champion, reference: parse / a11y / story pass / mean reward."""
    lines = [
        "| model | " + " | ".join(LABELS[m] for m in RESULT_METRICS) + " | n |",
        "|---|" + "---:|" * (len(RESULT_METRICS) + 1),
    ]
    for name in (name for name in ROW_ORDER if name in report.models):
        metrics = report.models[name].metrics
        label = ROW_LABELS.get(name, name)
        label = f"**{label}** (candidate)" if name == candidate else label
        values = " | ".join(_num(getattr(metrics, m)) for m in RESULT_METRICS)
        lines.append(f"| {label} | {values} | {metrics.n} |")
    return lines


def _interval(diff: dict[str, float]) -> str:
    return f"{_signed(diff['mean'])} [{_signed(diff['low'])}, {_signed(diff['high'])}]"


def _step_effects_section(comparison: dict[str, Any]) -> list[str]:
    effects = comparison.get("step_effects") or []
    confidence = comparison.get("confidence", 0.95)
    if not effects:
        return ["No two consecutive stages were evaluated, so there is no step effect to report.", ""]
    candidate = comparison.get("candidate")
    lines = [
        f"Each step against the previous one, paired over the same intents: difference with its {confidence:.0%}"
        f" paired bootstrap interval ({comparison.get('bootstrap_samples')} resamples, seed {comparison.get('seed')}).",
        "",
        f"| step | n | mean reward | story pass rate | improved (mean reward {confidence:.0%} CI above 0) |",
        "|---|---:|---|---|---|",
    ]
    not_improved = []
    for effect in effects:
        versus_baseline = effect["model"] == candidate and effect["baseline"] in ("nearest", "base")
        model = f"{effect['model']} (candidate)" if versus_baseline else effect["model"]
        step = f"{model} − {effect['baseline']}"
        metrics = effect["metrics"]
        cells = [_interval(metrics[m]["diff"]) if m in metrics else "n/a" for m in ("mean_reward", "story_pass_rate")]
        lines.append(f"| {step} | {effect['n']} | {cells[0]} | {cells[1]} | {'yes' if effect['improved'] else 'no'} |")
        if not effect["improved"]:
            not_improved.append(f"{effect['model']} − {effect['baseline']}")
    lines.append("")
    if not_improved:
        lines.append(f"Did not improve (mean reward CI includes 0 or lies below it): {', '.join(not_improved)}.")
    else:
        lines.append("Every step improved mean reward, each with a CI above 0.")
    lines.append("")
    return lines


def _selection_section(comparison: dict[str, Any]) -> list[str]:
    selection = comparison.get("selection")
    if not selection:
        return []
    candidate = selection["candidate"]
    if selection["rule"] != "best":
        return [f"The candidate is `{candidate}`, as `compare.candidate` names it.", ""]
    scores = ", ".join(f"`{name}` {_num(value)}" for name, value in selection["mean_reward"].items())
    lines = [
        f"The candidate is `{candidate}`: the trained stage with the highest held-out mean reward"
        f" (`compare.candidate: best`; ties go to the earlier stage). Mean reward per stage: {scores}.",
        "",
    ]
    runner_up, diff = selection.get("runner_up"), selection.get("runner_up_diff")
    if runner_up and diff:
        lines.append(
            "Choosing the candidate on the evaluation set is optimistic: its score on these intents is biased upward"
            f" by the choice. The runner-up `{runner_up}` differs by {_interval(diff)} in mean reward"
            f" ({comparison.get('confidence', 0.95):.0%} paired bootstrap CI); when that interval includes 0, the"
            " choice between them is not supported by the data."
        )
    else:
        lines.append("Only one trained stage was evaluated, so there was no choice to make.")
    lines.append("")
    return lines


def _constrained_section(report: EvalReport) -> list[str]:
    pairs = [
        (name[: -len(UNCONSTRAINED)], name)
        for name in report.models
        if name.endswith(UNCONSTRAINED) and name[: -len(UNCONSTRAINED)] in report.models
    ]
    if not pairs:
        return []
    lines = [
        "Tool calls decoded through the call grammar (known tools and arguments, well formed by construction)"
        " against free decoding of the same model:",
        "",
        "| model | decoding | parse rate | story pass rate | mean reward |",
        "|---|---|---:|---:|---:|",
    ]
    for constrained, free in pairs:
        for name, how in ((constrained, "constrained"), (free, "unconstrained")):
            m = report.models[name].metrics
            lines.append(
                f"| {constrained} | {how} | {_num(m.parse_rate)} | {_num(m.story_pass_rate)} | {_num(m.mean_reward)} |"
            )
    lines.append("")
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


def _opt(value: Any, digits: int = 3) -> str:
    return "–" if value is None else (f"{value:.{digits}f}" if isinstance(value, float) else str(value))


def _off(metrics: Mapping[str, Any]) -> bool:
    """A stage its profile turned off (``max_steps: 0``): skipped without a probe having run."""
    return bool(metrics.get("skipped")) and not metrics.get("probe")


def _training_section(training: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """What each trained stage did: steps, loss, throughput; the experience loop's samples; GRPO's
    reward signal per step, or why it did not train."""
    lines = [
        "| stage | steps | loss first → last | train tokens/s | wall s | precision |",
        "|---|---:|---:|---:|---:|---|",
    ]
    trained = {stage: m for stage, m in training.items() if not _off(m)}
    for stage, m in trained.items():
        run = m.get("training", m) if stage == "experience" else m
        tokens = run.get("train_tokens_per_second")
        lines.append(
            f"| {stage} | {_opt(run.get('global_step'))} | {_opt(run.get('loss_first'))} → {_opt(run.get('loss_last'))}"
            f" | {_opt(tokens, 1)} | {_opt(run.get('wall_s'), 0)} | {_opt(run.get('precision'))} |"
        )
    lines.append("")
    for stage, m in training.items():
        if _off(m):  # off in this profile: its input adapter written through, not evaluated again
            lines.append(f"- **{stage} did not train:** {m.get('reason', 'no reason recorded')}.")
    experience = trained.get("experience")
    if experience:
        variance = experience.get("reward_variance") or {}
        store = experience.get("store") or {}
        generation = experience.get("generation") or {}
        lines.append(
            f"- **Experience:** {experience.get('completions', 0)} samples of {experience.get('prompts_sampled', 0)} training"
            f" intents, {experience.get('passed', 0)} passed (pass rate {_opt(experience.get('pass_rate'))}, mean reward"
            f" {_opt(experience.get('mean_reward'))}); the reward varied on {_opt(variance.get('frac_prompts_with_variance'))}"
            f" of the intents. The store holds {store.get('total', 0)} samples from {store.get('runs', 0)} run(s);"
            f" pairs: {(experience.get('pairs') or {}).get('on_policy', 0)} on-policy,"
            f" {(experience.get('pairs') or {}).get('reference', 0)} reference-vs-failure."
            f" Generation {_opt(generation.get('tokens_per_second'), 1)} tokens/s."
        )
    grpo = trained.get("grpo")
    if grpo:
        probe = grpo.get("probe") or {}
        probed = f"the probe ({probe.get('generations', '?')} samples per prompt) found reward variance on " + (
            f"{_opt(1.0 - probe['frac_reward_zero_std'])} of {grpo.get('prompts_probed', grpo.get('prompts', '?'))} prompts"
            if isinstance(probe.get("frac_reward_zero_std"), float)
            else "no prompt"
        )
        if grpo.get("skipped"):
            lines.append(f"- **GRPO did not train:** {grpo.get('reason', 'no reason recorded')} ({probed}).")
        else:
            lines.append(
                f"- **GRPO** trained on {grpo.get('prompts')} prompts; {probed}. Per step (clipped: the share of"
                " completions that `grpo.max_completion_length` cut before they ended; a cut call scores 0):"
            )
            lines += [
                "",
                "| step | reward mean | reward std | frac_reward_zero_std | clipped | mean length | loss |",
                "|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for row in grpo.get("steps") or []:
                lines.append(
                    f"| {row.get('step')} | {_opt(row.get('reward'))} | {_opt(row.get('reward_std'))}"
                    f" | {_opt(row.get('frac_reward_zero_std'))} | {_opt(row.get('completions/clipped_ratio'))}"
                    f" | {_opt(row.get('completions/mean_length'), 0)} | {_opt(row.get('loss'), 4)} |"
                )
            trained = grpo.get("trained_prompts")
            if trained:
                lines += [
                    "",
                    f"Each step's reward is of that step's own prompt(s), so the steps alone cannot show a trend. The"
                    f" {trained.get('prompts')} trained prompts sampled again after training the way the probe"
                    f" sampled them ({trained.get('generations')} samples each): mean reward"
                    f" {_opt(trained.get('mean_before'))} before, {_opt(trained.get('mean_after'))} after; it rose on"
                    f" {trained.get('rose')} and fell on {trained.get('fell')} of them.",
                ]
    lines.append("")
    return lines


def render_report(
    report: EvalReport,
    comparison: dict[str, Any] | None,
    decision: GateDecision | None,
    candidate: str | None,
    images_dir: str = ".",
    training: Mapping[str, Mapping[str, Any]] | None = None,
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
    lines += ["", "## Results", ""]
    lines += _results_table(report, candidate)
    lines.append("")
    if comparison is not None:
        lines += ["## Step effects", ""]
        lines += _step_effects_section(comparison)
        selection = _selection_section(comparison)
        if selection:
            lines += ["## Candidate selection", "", *selection]
    if training:
        lines += ["## Training", "", *_training_section(training)]
    constrained = _constrained_section(report)
    if constrained:
        lines += ["## Constrained decoding", "", *constrained]
    lines += ["## All metrics", ""]
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
    training: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    atomic_write_text(path, render_report(report, comparison, decision, candidate, training=training))
    return path
