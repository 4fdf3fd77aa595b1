"""compare: the candidate (``compare.candidate``: ``best`` or a stage), candidate − champion and base per
metric, and each step's effect over the previous one, with paired bootstrap CIs → compare.json; the
candidate's metrics into a DVCLive folder (one ``dvc exp show`` column each)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from worldagent.config import Params
from worldagent.errors import InputError
from worldagent.evaluation.compare import compare_stages
from worldagent.evaluation.eval_files import read_eval_report
from worldagent.evaluation.live_metrics import log_candidate
from worldagent.io import atomic_write_text, pretty_json

log = logging.getLogger("worldagent.evaluation")


def compare_stage(params: Params, *, summary: Path, intents: Path, comparison: Path, live: Path) -> dict[str, Any]:
    """The candidate, candidate − champion and base per metric, and the step effects → ``comparison``;
    the candidate's metrics → the DVCLive folder ``live``."""
    try:
        report = read_eval_report(summary, intents)
        result = compare_stages(
            report,
            candidate=params.compare.candidate,
            samples=params.compare.bootstrap_samples,
            confidence=params.compare.confidence,
            seed=params.seed,
        )
    except InputError:
        raise
    except ValueError as error:  # no candidate to choose (compare.candidate names a model not evaluated)
        raise InputError(f"{summary}: {error}") from None
    atomic_write_text(comparison, pretty_json(result))
    log_candidate(live, report.models[result["candidate"]].metrics)
    selection = result["selection"]
    log.info("candidate: %s (rule %s)", result["candidate"], selection["rule"])
    for name, versus in result["comparisons"].items():
        if versus is None:
            log.info("%s vs %s: not evaluated", result["candidate"], name)
            continue
        diff = versus["metrics"]["mean_reward"]["diff"]
        log.info(
            "%s − %s mean reward %+.3f [%+.3f, %+.3f]",
            *(result["candidate"], name, diff["mean"], diff["low"], diff["high"]),
        )
    for note in result["notes"]:
        log.info("%s", note)
    return result
