"""gate stage: eval.json + compare.json → gate.json {passed, reasons, checks, candidate} and report.md.

`python -m tasks.gate` is the command in dvc.yaml; `gate_task` is the Prefect task that runs the
same stage through DVC. A failing gate is a decision, not an error: the stage exits 0 and the
deploy step acts on gate.json (in CI the deploy step makes the job fail).
"""

from __future__ import annotations

from pathlib import Path

from prefect import task

from tasks._stage import dvc_repro, stage_main
from worldagent import paths
from worldagent.config import Params
from worldagent.evaluation.gate import GateDecision
from worldagent.evaluation.stages import gate_stage


def run(params: Params, root: Path) -> GateDecision:
    return gate_stage(
        params,
        summary=root / paths.WORLD_AGENT_EVAL,
        intents=root / paths.WORLD_AGENT_EVAL_INTENTS,
        comparison=root / paths.WORLD_AGENT_COMPARE,
        candidate=root / paths.WORLD_AGENT_MODELS / params.compare.candidate,
        report=root / paths.WORLD_AGENT_REPORT,
        decision=root / paths.WORLD_AGENT_GATE,
    )


@task(name="gate", retries=0)
def gate_task(root: Path = Path(".")) -> list[str]:
    return dvc_repro("gate", root)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
