"""gate stage: eval.json + compare.json + the candidate → gate.json and report.md.

`python -m tasks.gate` is the command dvc.yaml runs, with paths from the stage table. gate.json is
``{passed, reasons, checks, candidate, artifact_hash}``: deploy publishes only the artifact whose
content hash the gate scored. A failing gate is a decision, not an error: the stage exits 0 and the
deploy step acts on gate.json (in CI the deploy step makes the job fail).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from tasks._stage import stage_main
from worldagent.config import Params
from worldagent.errors import InputError
from worldagent.evaluation.gate import GateDecision, decide
from worldagent.evaluation.report import gate_payload, read_eval_report, write_report
from worldagent.io import atomic_write_text, pretty_json
from worldagent.registry.deploy import directory_hash

log = logging.getLogger("gate")


def read_comparison(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: not found (run the compare stage first)") from None
    except json.JSONDecodeError as error:
        raise InputError(f"{path}:{error.lineno}:{error.colno}: invalid JSON: {error.msg}") from None


def run(
    params: Params, *, summary: Path, intents: Path, comparison: Path, candidate: Path, report: Path, decision: Path
) -> GateDecision:
    evaluation = read_eval_report(summary, intents)
    compared = read_comparison(comparison)
    name = str(compared.get("candidate") or params.compare.candidate)
    if name not in evaluation.models:
        raise InputError(f"{summary}: the candidate {name!r} was not evaluated")
    outcome = decide(evaluation.models[name].metrics, compared, params.gate)
    extra = {"artifact_hash": directory_hash(candidate)}
    atomic_write_text(decision, pretty_json(gate_payload(outcome, name, extra)))
    write_report(report, evaluation, compared, outcome, name)
    log.info("gate %s for %s", "PASSED" if outcome.passed else "FAILED", name)
    for reason in outcome.reasons:
        log.info("  %s", reason)
    return outcome


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
