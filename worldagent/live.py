"""Training curves through DVCLive, so ``dvc exp show``, ``dvc plots show/diff`` and the VS Code
extension see every run, and a run can be watched while it trains.

A stage's DVCLive folder (``reports/<family>/training/<stage>/``) holds ``metrics.json`` (the latest
step's values: a DVC metric) and ``plots/metrics/<name>.tsv`` (one row a step: a DVC plot); the
stage table declares both (``Stage.live``). DVCLive runs inside the DVC stage here, so it neither
writes a ``dvc.yaml`` of its own nor saves an experiment: ``dvc exp run`` does that.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldagent.errors import RunError
from worldagent.guard import files

if TYPE_CHECKING:
    from dvclive import Live


def open_live(directory: Path, *, resume: bool = False) -> Live:
    """A DVCLive logger writing into ``directory``; a fresh run starts from an empty folder, a
    resumed one (from a training checkpoint) appends to the curves it had."""
    from dvclive import Live
    from scmrepo.exceptions import SCMError

    if not resume:
        shutil.rmtree(directory, ignore_errors=True)
    try:
        return Live(
            dir=str(directory), resume=resume, report=None, save_dvc_exp=False, dvcyaml=None, monitor_system=False
        )
    except SCMError as error:  # DVCLive reads the git revision it starts from; a new repository has none
        raise RunError(
            f"{directory}: DVCLive cannot start here ({error}): commit the project once (`git commit`) and run again"
        ) from None


def loggable(row: Mapping[str, Any], skip: Iterable[str] = ()) -> dict[str, float]:
    """The finite numbers of a logged row, minus the step counter and ``skip``."""
    skipped = {"step", *skip}
    return {
        key: float(value)
        for key, value in row.items()
        if key not in skipped
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    }


def log_rows(live: Live, rows: Iterable[Mapping[str, Any]], step_key: str) -> int:
    """Each row (a training curve's epoch or step) as one DVCLive step; the number of steps logged."""
    logged = 0
    for row in rows:
        live.step = int(row[step_key])
        for key, value in loggable(row, skip=(step_key,)).items():
            live.log_metric(key, value)
        live.next_step()
        logged += 1
    return logged


def write_curve(directory: Path, rows: Iterable[Mapping[str, Any]], step_key: str) -> int:
    """A finished curve (an intervention model's epochs) into a DVCLive folder at once."""
    live = open_live(directory)
    try:
        return log_rows(live, rows, step_key)
    finally:
        live.end()


def read_curve(directory: Path, name: str) -> list[tuple[int, float]]:
    """The values of ``name`` by step, as a DVCLive folder holds them (``plots/metrics/<name>.tsv``);
    empty when the run never logged it."""
    path = directory / "plots" / "metrics" / f"{name}.tsv"
    if not path.is_file():
        return []
    text = files.read_text(path, what="a DVCLive curve")  # the file guard: a regular file under the cap
    rows = [line.split("\t") for line in text.splitlines()[1:] if line]
    return [(int(row[0]), float(row[-1])) for row in rows]
