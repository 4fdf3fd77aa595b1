"""gate stage: eval.json + compare.json → gate.json {passed, reasons, checks, candidate} and report.md.

`python -m tasks.gate` is the command in dvc.yaml; `gate_task` is the Prefect task that runs the
same stage through DVC. A failing gate is a decision, not an error: the stage exits 0 and the
deploy step acts on gate.json (in CI the deploy step makes the job fail).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from prefect import task

from tasks._stage import dvc_repro, stage_main
from worldagent.config import Params
from worldagent.evaluation.gate import GateDecision, decide
from worldagent.evaluation.report import COMPARE_JSON, GATE_JSON, REPORT_DIR, gate_payload, read_eval_report, write_report
from worldagent.io import atomic_write_text, pretty_json

log = logging.getLogger("gate")


def read_comparison(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: not found (run the compare stage first)") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}:{error.lineno}:{error.colno}: invalid JSON: {error.msg}") from None


def run(params: Params, root: Path) -> GateDecision:
    out_dir = root / REPORT_DIR
    report = read_eval_report(out_dir)
    comparison = read_comparison(out_dir / COMPARE_JSON)
    candidate = str(comparison.get("candidate") or params.compare.candidate)
    if candidate not in report.models:
        raise ValueError(f"{out_dir / 'eval.json'}: the candidate {candidate!r} was not evaluated")
    decision = decide(report.models[candidate].metrics, comparison, params.gate)
    atomic_write_text(out_dir / GATE_JSON, pretty_json(gate_payload(decision, candidate)))
    write_report(out_dir, report, comparison, decision, candidate)
    log.info("gate %s for %s", "PASSED" if decision.passed else "FAILED", candidate)
    for reason in decision.reasons:
        log.info("  %s", reason)
    return decision


@task(name="gate", retries=0)
def gate_task(root: Path = Path(".")) -> list[str]:
    return dvc_repro("gate", root)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
