"""The DVC remote round trip against a local S3-compatible endpoint (moto's server on 127.0.0.1, the way
DVC tests its own S3 remote): one clone runs and pushes (outputs and run-cache), a fresh clone pulls
and gets the outputs back without recomputing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.production.conftest import BUCKET

pytestmark = pytest.mark.slow


DVC = str(Path(sys.executable).parent / "dvc")


def run(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "testing",  # credentials come from the environment (CI secrets), never .dvc/config
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "DVC_NO_ANALYTICS": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(args)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def configure_remote(clone: Path, endpoint: str) -> None:
    """As docs/production.md and train.yml do: per clone (.dvc/config.local), credentials in the environment."""
    run(clone, DVC, "remote", "add", "--local", "-d", "storage", f"s3://{BUCKET}/cache")
    run(clone, DVC, "remote", "modify", "--local", "storage", "endpointurl", endpoint)


def test_push_from_one_clone_and_pull_into_a_fresh_one(tmp_path: Path, s3_endpoint: str) -> None:
    origin, first, fresh = tmp_path / "origin.git", tmp_path / "first", tmp_path / "fresh"
    run(tmp_path, "git", "init", "-q", "--bare", str(origin))
    run(tmp_path, "git", "clone", "-q", str(origin), str(first))
    run(first, "git", "checkout", "-q", "-b", "main")
    run(first, DVC, "init", "-q")
    configure_remote(first, s3_endpoint)
    (first / "raw.txt").write_text("stories\n")
    counter = first / "runs.log"  # outside DVC: how many times the stage really ran in this clone
    (first / "make_out.py").write_text(
        "import pathlib\n"
        "pathlib.Path('out.txt').write_text(pathlib.Path('raw.txt').read_text().upper())\n"
        "with open('runs.log', 'a') as log:\n"
        "    log.write('ran\\n')\n"
    )
    command = f"{sys.executable} make_out.py"
    run(first, DVC, "stage", "add", "-q", "-n", "train", "-d", "raw.txt", "-o", "out.txt", command)
    (first / ".gitignore").write_text(
        (first / ".gitignore").read_text() + "runs.log\n" if (first / ".gitignore").exists() else "runs.log\n"
    )
    run(first, DVC, "repro", "-q")
    assert (first / "out.txt").read_text() == "STORIES\n" and counter.read_text().count("ran") == 1
    run(first, "git", "add", "-A")
    run(first, "git", "commit", "-q", "-m", "week 1")
    run(first, DVC, "push", "--run-cache")
    run(first, "git", "push", "-q", "origin", "main")

    run(tmp_path, "git", "clone", "-q", "-b", "main", str(origin), str(fresh))
    assert not (fresh / "out.txt").exists()
    assert "storage" not in run(fresh, DVC, "remote", "list")  # nothing about the remote is committed
    configure_remote(fresh, s3_endpoint)
    run(fresh, DVC, "pull", "--run-cache")
    assert (fresh / "out.txt").read_text() == "STORIES\n"
    status = run(fresh, DVC, "status")
    assert "up to date" in status.lower() or status.strip() == ""
    # Nothing changed: repro restores from the run-cache instead of running the stage.
    (fresh / "out.txt").unlink()
    repro = run(fresh, DVC, "repro")
    assert (fresh / "out.txt").read_text() == "STORIES\n"
    assert not (fresh / "runs.log").exists(), repro  # the stage's command never ran in the fresh clone
    shutil.rmtree(first)
