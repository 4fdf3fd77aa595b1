"""evaluate stage: the eval split through every model of evaluate.models → eval.json, eval_intents.jsonl, plots.

`python -m tasks.evaluate` is the command dvc.yaml runs, with paths from the stage table.
A failing model is an error; a missing champion (the first run) is a note in the report.
"""

from __future__ import annotations

from worldagent.pipeline.entry import stage_main
from worldagent.world_agent.stages.evaluate import combine_evaluations_stage as run


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
