"""compare stage: eval.json + eval_intents.jsonl → compare.json (candidate − champion and − base, bootstrap CIs).

`python -m tasks.compare` is the command dvc.yaml runs, with paths from the stage table.
"""

from __future__ import annotations

from worldagent.pipeline.entry import stage_main
from worldagent.world_agent.stages.compare import compare_stage as run


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
