"""Two evaluations of the same held-out intents, paired: ``worldagent compare A B``.

How a data scientist reads two ``dvc exp`` runs (or two stages of one run) against each other:
each side is a per-model evaluation file (``reports/world_agent/eval/<model>.json``, its first row
unless ``FILE#ROW`` names another, e.g. ``grpo.json#grpo (unconstrained)``) or the evaluate stage's
``eval_intents.jsonl`` with the model named (``eval_intents.jsonl#sft``; git tracks that file, so
``git show <exp>:reports/world_agent/eval_intents.jsonl`` gives any experiment's). The two sides
are paired by intent id; every metric's B − A difference gets the paired bootstrap CI that the
compare stage uses (:func:`worldagent.evaluation.compare.compare`), and the story passes are split
into those only A has and those only B has: two runs with the same pass rate can pass other stories.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldagent.errors import InputError
from worldagent.evaluation.compare import compare
from worldagent.evaluation.metrics import EvalReport, IntentResult, ModelEval, summarize
from worldagent.evaluation.model_eval import read_model_eval
from worldagent.io import read_jsonl

ROW_SEPARATOR = "#"
_SIDES = ("A", "B")  # the names the two sides take inside the paired report (their rows may share a name)


@dataclass(frozen=True)
class EvalSide:
    """One side of a comparison: where it came from and its per-intent results."""

    file: str
    row: str
    results: list[IntentResult]


def split_spec(spec: str) -> tuple[Path, str | None]:
    """``FILE`` or ``FILE#ROW``; an existing file whose name holds ``#`` is taken whole."""
    if ROW_SEPARATOR in spec and not Path(spec).exists():
        path, row = spec.rsplit(ROW_SEPARATOR, 1)
        return Path(path), row or None
    return Path(spec), None


def _from_intent_rows(path: Path, row: str | None) -> EvalSide:
    """The rows of one model in the evaluate stage's ``eval_intents.jsonl``."""
    records = read_jsonl(path, "the per-intent results", hint="run the evaluate stage first")
    models = list(dict.fromkeys(str(record.get("model")) for record in records))
    if row is None:
        if len(models) != 1:
            raise InputError(f"{path}: holds {len(models)} models ({', '.join(models)}): name one as {path}#MODEL")
        row = models[0]
    if row not in models:
        raise InputError(f"{path}: no model {row!r}; it holds {', '.join(models) or 'none'}")
    results = []
    for number, record in enumerate(records, start=1):
        if record.get("model") != row:
            continue
        fields = {key: value for key, value in record.items() if key != "model"}
        try:
            results.append(IntentResult.model_validate(fields))
        except ValueError as error:
            raise InputError(f"{path}:{number}: not a per-intent result ({str(error).splitlines()[0]})") from None
    return EvalSide(str(path), row, results)


def _from_model_eval(path: Path, row: str | None) -> EvalSide:
    """One row (the first, the model as configured, unless ``row`` names another) of a per-model file."""
    evaluation = read_model_eval(path)
    if not evaluation.rows:
        raise InputError(f"{path}: {evaluation.model!r} was not evaluated (the file has no rows)")
    names = [r.name for r in evaluation.rows]
    if row is None:
        return EvalSide(str(path), names[0], list(evaluation.rows[0].per_intent))
    if row not in names:
        raise InputError(f"{path}: no row {row!r}; it holds {', '.join(repr(n) for n in names)}")
    chosen = evaluation.rows[names.index(row)]
    return EvalSide(str(path), row, list(chosen.per_intent))


def load_side(spec: str) -> EvalSide:
    """``FILE[#ROW]``: a per-model evaluation file (``.json``) or an ``eval_intents.jsonl``."""
    path, row = split_spec(spec)
    side = _from_intent_rows(path, row) if path.suffix == ".jsonl" else _from_model_eval(path, row)
    if not side.results:
        raise InputError(f"{path}: {side.row!r} has no evaluated intents")
    repeated = [intent for intent, count in Counter(r.id for r in side.results).items() if count > 1]
    if repeated:
        raise InputError(f"{path}: intent {repeated[0]!r} appears more than once in {side.row!r}")
    return side


def _few(ids: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def paired(a: EvalSide, b: EvalSide) -> tuple[list[IntentResult], list[IntentResult]]:
    """A's and B's results on the same intents, in A's order; intents only one side evaluated, or
    that the two sides word differently (another held-out split), are an error: a difference over
    other intents is not a paired one."""
    by_id = {result.id: result for result in b.results}
    only_a = [r.id for r in a.results if r.id not in by_id]
    only_b = sorted(set(by_id) - {r.id for r in a.results})
    if only_a or only_b:
        parts = [f"{len(ids)} only in {side} ({_few(ids)})" for side, ids in (("A", only_a), ("B", only_b)) if ids]
        raise InputError(
            f"{a.file} ({a.row}) and {b.file} ({b.row}) did not evaluate the same intents: "
            + "; ".join(parts)
            + ". Compare evaluations of the same held-out split (the generate stage's eval rows)."
        )
    for result in a.results:
        if result.intent != by_id[result.id].intent:
            raise InputError(
                f"intent {result.id!r} is worded differently in {a.file} and {b.file}: the two runs"
                " evaluated other held-out prompts, so they cannot be paired"
            )
    return list(a.results), [by_id[result.id] for result in a.results]


def compare_evaluations(
    a: EvalSide, b: EvalSide, samples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> dict[str, Any]:
    """B − A per metric (means, difference and paired bootstrap CI, verdict) and the story passes
    only one side has; JSON-ready."""
    results_a, results_b = paired(a, b)
    ids = [result.id for result in results_a]
    report = EvalReport(
        models={
            name: ModelEval(metrics=summarize(results), per_intent=results)
            for name, results in zip(_SIDES, (results_a, results_b), strict=True)
        },
        intents=ids,
    )
    try:
        versus = compare(report, "B", ("A",), samples=samples, confidence=confidence, seed=seed)["comparisons"]["A"]
    except ValueError as error:  # samples or confidence out of range
        raise InputError(str(error)) from None
    metrics = {
        metric: {
            "a": values["baseline"],
            "b": values["candidate"],
            "diff": values["diff"],
            "higher_is_better": values["higher_is_better"],
            "verdict": values["verdict"],
        }
        for metric, values in versus["metrics"].items()
    }
    passes = [(ra.story_passed, rb.story_passed) for ra, rb in zip(results_a, results_b, strict=True)]
    return {
        "a": {"file": a.file, "row": a.row},
        "b": {"file": b.file, "row": b.row},
        "n": len(ids),
        "confidence": confidence,
        "bootstrap_samples": samples,
        "seed": seed,
        "metrics": metrics,
        "passes": {
            "both": sum(pa and pb for pa, pb in passes),
            "neither": sum(not pa and not pb for pa, pb in passes),
            "only_a": [i for i, (pa, pb) in zip(ids, passes, strict=True) if pa and not pb],
            "only_b": [i for i, (pa, pb) in zip(ids, passes, strict=True) if pb and not pa],
        },
    }
