"""Two weekly runs on two fresh runners: the second pulls the first's DVC outputs (S3 remote, run-cache)
and published champion, reads the registry from PostgreSQL, recomputes only what the moved champion
touches, and gates against last week's champion."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import TINY, TINY_COMPONENTS, copy_project, env, flow_result
from tests.production.conftest import AWS_ENV, BUCKET

pytestmark = pytest.mark.slow
DVC = str(Path(sys.executable).parent / "dvc")
PUBLISHED = "models/published"


def run(root: Path, registry_url: str, *args: str) -> str:
    variables = {**env(root), **AWS_ENV, "WORLDAGENT_REGISTRY_URL": registry_url, "GIT_AUTHOR_NAME": "ci"}
    variables |= {
        "GIT_AUTHOR_EMAIL": "ci@example.com",
        "GIT_COMMITTER_NAME": "ci",
        "GIT_COMMITTER_EMAIL": "ci@example.com",
    }
    done = subprocess.run(args, cwd=root, env=variables, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def s3(endpoint: str):  # type: ignore[no-untyped-def]
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        **{
            "aws_access_key_id": AWS_ENV["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": AWS_ENV["AWS_SECRET_ACCESS_KEY"],
        },
    )


def sync_published_up(root: Path, endpoint: str) -> None:
    """What train.yml's `aws s3 sync models/published` does after a deploy."""
    client = s3(endpoint)
    for path in (root / PUBLISHED).rglob("*"):
        if path.is_file():
            client.upload_file(str(path), BUCKET, f"published/{path.relative_to(root / PUBLISHED).as_posix()}")


def sync_published_down(root: Path, endpoint: str) -> None:
    client = s3(endpoint)
    for item in client.list_objects_v2(Bucket=BUCKET, Prefix="published/").get("Contents", []):
        target = root / PUBLISHED / item["Key"].removeprefix("published/")
        target.parent.mkdir(parents=True, exist_ok=True)
        client.download_file(BUCKET, item["Key"], str(target))


def weekly_run(root: Path, url: str, endpoint: str) -> dict:
    """One runner's job, as train.yml runs it: remote set up, pull, the flow, push, published synced."""
    run(root, url, DVC, "remote", "add", "--local", "-d", "storage", f"s3://{BUCKET}/cache")
    run(root, url, DVC, "remote", "modify", "--local", "storage", "endpointurl", endpoint)
    run(root, url, DVC, "pull", "--run-cache", "--allow-missing")
    sync_published_down(root, endpoint)
    out = run(root, url, sys.executable, "-m", "flows.world_agent", "--root", str(root))
    run(root, url, DVC, "push", "--run-cache")
    sync_published_up(root, endpoint)
    return flow_result(out)


def test_the_second_week_pulls_the_first_weeks_state_and_gates_against_its_champion(
    tmp_path: Path, postgres_server, s3_endpoint: str
) -> None:  # type: ignore[no-untyped-def]
    url = postgres_server.create_database()
    # A gate the tiny model passes, so that week 1 deploys a champion for week 2 to compare with.
    lenient = {"gate": {"min_a11y_pass_rate": 0.0, "max_constraint_violations": 1000.0, "margin": 1.0}}
    (tmp_path / "week1").mkdir()
    first = copy_project(tmp_path / "week1", {**TINY, **lenient}, TINY_COMPONENTS)
    (first / ".gitignore").write_text("/.prefect/\n")
    run(first, url, "git", "add", "-A")
    run(first, url, "git", "commit", "-qm", "the project")

    week1 = weekly_run(first, url, s3_endpoint)
    assert week1["champion"]["version"] is None  # the first week has no champion to compare with
    assert {"base", "sft", "dpo", "grpo"} <= set(week1["recomputed"])
    assert week1["gate"]["passed"] and week1["deploy"]["action"] == "deployed"
    run(first, url, "git", "add", "-A")
    run(first, url, "git", "commit", "-qm", "week 1: dvc.lock and reports")

    second = tmp_path / "week2"  # a fresh runner: a clone, no DVC cache, no models, no registry file
    run(tmp_path, url, "git", "clone", "-q", str(first), str(second))
    assert not (second / "models" / "world_agent" / "grpo").exists()
    week2 = weekly_run(second, url, s3_endpoint)

    assert week2["champion"]["version"] == week1["deploy"]["version"]  # last week's champion, from PostgreSQL
    assert not {"base", "sft", "dpo", "grpo"} & set(week2["recomputed"])  # pulled, not retrained
    assert week2["recomputed"] == [
        "evaluate_champion",
        "evaluate",
        "compare",
        "gate",
    ]  # only what compares with the champion
    comparison = json.loads((second / "reports/world_agent/compare.json").read_text())
    assert comparison["comparisons"]["champion"] is not None
    assert any(check["name"].startswith("non_inferiority") for check in week2["gate"]["checks"])
    assert week2["deploy"]["action"] == "unchanged"  # the same adapter is not published twice
    shutil.rmtree(tmp_path / "week1" / ".prefect", ignore_errors=True)
