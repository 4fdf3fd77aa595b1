"""gate stage: eval.json + compare.json + the candidate → gate.json (with the candidate's content hash) and report.md.

`python -m tasks.gate` is the command dvc.yaml runs, with paths from the stage table.
A failing gate is a decision, not an error: the stage exits 0 and deploy acts on gate.json (in CI the
deploy step makes the job fail).
"""

from __future__ import annotations

from worldagent.pipeline.entry import stage_main
from worldagent.world_agent.stages.gate import gate_best_stage as run


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
