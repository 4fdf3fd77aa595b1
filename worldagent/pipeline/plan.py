"""A run's plan before its first stage: the profile, each stage's expected time and the total, and
whether this machine suits another profile better; then, as stages end, how much time is left.

Each stage's expected time comes from this machine's own cost ledger (``logs/flow-runs.jsonl``,
:mod:`worldagent.pipeline.costs`: the last run of the same profile that computed the stage) and,
for a stage that ledger has not timed, from the profile's committed measurement
(``profiles/measured/costs.yaml``, whose figures docs/profiles.md explains). A stage neither
knows is shown as unknown and left out of the total.

Read by the flows and the command line only, never by a DVC stage.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldagent.errors import InputError
from worldagent.pipeline.costs import DEFAULT_LEDGER, last_computed, read_ledger
from worldagent.pipeline.table import Pipeline, Stage

MEASURED = Path("profiles/measured/costs.yaml")


@dataclass(frozen=True)
class StagePlan:
    family: str
    stage: str
    seconds: float | None  # None: neither the ledger nor the measurement has it
    source: str  # "this machine" | "measured" | "share of a group measured together" | "unknown"


@dataclass(frozen=True)
class Measurement:
    """One profile's (or run's) committed measurement: its host and seconds by family and stage key."""

    name: str
    host: str
    source: str
    wall_seconds: float | None
    families: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def total(self) -> float:
        """The measured wall time when recorded, else the sum of the stages' times."""
        if self.wall_seconds is not None:
            return self.wall_seconds
        return sum(float(seconds) for stages in self.families.values() for seconds in stages.values())


def read_measurements(path: Path = MEASURED, section: str = "profiles") -> dict[str, Measurement]:
    """``path``'s ``section`` (``profiles`` or ``runs``) by name; a malformed entry is an error naming it.
    No file: nothing measured (a project of its own, a test's copy), every stage's time unknown."""
    from worldagent.guard.yaml import read_yaml

    if not path.exists():
        return {}
    data = read_yaml(path, what="the measured costs") or {}
    if not isinstance(data, Mapping):
        raise InputError(f"{path}: a mapping with `profiles` (and `runs`)")
    entries = data.get(section) or {}
    measurements = {}
    for name, entry in entries.items():
        where = f"{path}: {section}.{name}"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("families", {}), Mapping):
            raise InputError(f"{where}: a mapping with host, source, wall_seconds and families")
        families: dict[str, dict[str, float]] = {}
        for family, stages in (entry.get("families") or {}).items():
            if not isinstance(stages, Mapping) or not all(
                isinstance(v, (int, float)) and v >= 0 for v in stages.values()
            ):
                raise InputError(f"{where}.families.{family}: stage names to seconds (numbers, 0 or more)")
            families[str(family)] = {str(k): float(v) for k, v in stages.items()}
        wall = entry.get("wall_seconds")
        measurements[str(name)] = Measurement(
            str(name), str(entry.get("host", "")), str(entry.get("source", "")), wall, families
        )
    return measurements


def _measured_stage(stages: Mapping[str, float], stage: str, names: Sequence[str]) -> tuple[float, str] | None:
    """``stage``'s seconds in one family's measurement: its own key, else an even share of the
    first key that names it among others (``names``: the family's stages, to count the share)."""
    if stage in stages:
        return stages[stage], "measured"
    for key, seconds in stages.items():
        patterns = key.split()
        if len(patterns) == 1 and not any(c in key for c in "*?["):
            continue
        if any(fnmatch.fnmatchcase(stage, pattern) for pattern in patterns):
            together = [n for n in names if any(fnmatch.fnmatchcase(n, pattern) for pattern in patterns)]
            return seconds / max(len(together), 1), "share of a group measured together"
    return None


def _ledger_costs(root: Path, ledger: Path, family: str, profile: str | None) -> dict[str, float]:
    """This machine's last computed time of each ``family`` stage, in runs of ``profile``."""
    path = root / ledger
    if profile is None or not path.is_file():
        return {}
    records = [r for r in read_ledger(path, family) if r.get("profile") == profile]
    return {cost.step: cost.seconds for cost in last_computed(records) if cost.seconds is not None}


def stage_plan(
    pipelines: Sequence[Pipeline],
    profile: str | None,
    root: Path = Path("."),
    ledger: Path = DEFAULT_LEDGER,
    measured: Mapping[str, Measurement] | None = None,
) -> list[StagePlan]:
    """Every stage of ``pipelines`` in order with its expected time (see the module docstring)."""
    measurements = read_measurements(root / MEASURED) if measured is None else measured
    measurement = measurements.get(profile or "")
    plan = []
    for pipeline in pipelines:
        names = [step.name for step in pipeline.steps if isinstance(step, Stage)]
        here = _ledger_costs(root, ledger, pipeline.family, profile)
        stages = measurement.families.get(pipeline.family, {}) if measurement else {}
        for name in names:
            if name in here:
                plan.append(StagePlan(pipeline.family, name, here[name], "this machine"))
            elif (found := _measured_stage(stages, name, names)) is not None:
                plan.append(StagePlan(pipeline.family, name, *found))
            else:
                plan.append(StagePlan(pipeline.family, name, None, "unknown"))
    return plan


def duration(seconds: float) -> str:
    """``4 h 48 min``, ``16 min``, ``45 s``: a plan's precision."""
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min" if minutes >= 10 else f"{minutes} min {secs:02d} s"
    return f"{secs} s"


def total(plan: Sequence[StagePlan]) -> float:
    return sum(stage.seconds or 0.0 for stage in plan)


def plan_text(plan: Sequence[StagePlan], profile: str | None, measurement: Measurement | None) -> str:
    """The plan as lines: the profile, one line per stage, the total (and the measured wall time)."""
    name = profile or "none (params.yaml matches no profile: edited by hand)"
    lines = [f"profile: {name}"]
    width = max((len(f"{s.family}/{s.stage}") for s in plan), default=0)
    for stage in plan:
        expected = "unknown" if stage.seconds is None else duration(stage.seconds)
        note = "" if stage.source in ("measured", "unknown") else f" ({stage.source})"
        lines.append(f"  {f'{stage.family}/{stage.stage}':<{width}}  {expected:>12}{note}")
    summed = total(plan)
    line = f"expected in all: about {duration(summed)}, one stage after another"
    unknown = [s.stage for s in plan if s.seconds is None]
    if unknown:
        line += f" (without {', '.join(unknown)}: never timed)"
    if measurement is not None and measurement.wall_seconds is not None:
        line += f"; measured from nothing: {duration(measurement.wall_seconds)} on {measurement.host}"
    lines.append(line)
    return "\n".join(lines)


def better_profile(
    profile: str | None, device: str, measurements: Mapping[str, Measurement], plan_total: float | None = None
) -> str | None:
    """A line when this machine suits another profile better than ``profile`` (None when not):
    CUDA present and not running ``gpu``; ``gpu`` asked on a machine without an accelerator."""
    gpu = measurements.get("gpu")
    if device == "cuda" and profile != "gpu" and gpu is not None:
        return (
            f"CUDA is present: `make profile PROFILE=gpu` runs the full budgets in about {duration(gpu.total())} "
            f"here (measured on {gpu.host})"
        )
    if device == "cpu" and profile == "gpu":
        cpu = measurements.get("cpu")
        cost = f" (about {duration(cpu.total())} on {cpu.host})" if cpu is not None else ""
        return f"no GPU here: the gpu profile's micro-batches are laid out for one; `make profile PROFILE=cpu`{cost}"
    return None


def remaining(plan: Sequence[StagePlan], done: set[tuple[str, str]]) -> float:
    """The expected seconds of the stages of ``plan`` not in ``done`` ((family, stage) pairs)."""
    return sum(stage.seconds or 0.0 for stage in plan if (stage.family, stage.stage) not in done)


def progress_line(
    plan: Sequence[StagePlan], done: set[tuple[str, str]], family: str, stage: str, seconds: float, ran: bool
) -> str:
    """``[4/26] world-agent/sft done in 1 h 50 min (expected 1 h 51 min); about 2 h 57 min left``."""
    expected = next((s.seconds for s in plan if (s.family, s.stage) == (family, stage)), None)
    what = f"done in {duration(seconds)}" if ran else f"up to date ({duration(seconds)})"
    if expected is not None and ran:
        what += f" (expected {duration(expected)})"
    finished = sum(1 for s in plan if (s.family, s.stage) in done)
    return f"[{finished}/{len(plan)}] {family}/{stage} {what}; about {duration(remaining(plan, done))} left"


def plan_for(
    pipelines: Sequence[Pipeline], root: Path, profile: str | None, device: str
) -> tuple[list[StagePlan], str]:
    """The plan and its text (the better-profile note last, when there is one)."""
    measurements = read_measurements(root / MEASURED)
    plan = stage_plan(pipelines, profile, root, measured=measurements)
    text = plan_text(plan, profile, measurements.get(profile or ""))
    if note := better_profile(profile, device, measurements):
        text += f"\nnote: {note}"
    return plan, text


def plan_dict(plan: Sequence[StagePlan]) -> list[dict[str, Any]]:
    """``plan`` as plain dicts (a Prefect task's argument)."""
    return [{"family": s.family, "stage": s.stage, "seconds": s.seconds, "source": s.source} for s in plan]
