"""`worldagent trainer serve --profile tiny`: the quick mode a platform's end-to-end suite starts. It
trains with the tiny profile's specialists section (the built-in tiny base, 6 steps) and completes a
job from a raw feedback export within 30 s of `POST /train`; params.yaml is left as it is."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import httpx
import yaml
from specialists_helpers import PROJECT, Server, free_port, raw_export_rows, wait_until

QUICK_S = 30.0  # issue 87's target, from POST /train to completed


def test_the_tiny_profile_completes_a_feedback_export_job_within_30_s(tmp_path: Path) -> None:
    shutil.copy(PROJECT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(PROJECT / "profiles", tmp_path / "profiles")
    before = (tmp_path / "params.yaml").read_text()
    data = tmp_path / "data"
    data.mkdir()
    export = data / "raw.jsonl"
    export.write_text("".join(json.dumps(row) + "\n" for row in raw_export_rows(12)), encoding="utf-8")
    args = ["trainer", "serve", "--profile", "tiny", "--params", "params.yaml", "--data-dir", str(data)]
    server = Server(args, tmp_path, free_port(), tmp_path / "trainer.log").start()
    try:
        # As an e2e suite does: wait for the warm worker (imports done, base built), then post one job.
        wait_until(lambda: httpx.get(server.url + "/health").json()["warm_workers"] >= 1, 120, what="a warm worker")
        posted = time.monotonic()
        job = {"jobId": "job-1", "datasetRef": str(export), "runId": "quick-1"}
        assert httpx.post(server.url + "/train", json=job).status_code == 202

        def finished() -> dict | None:
            status = httpx.get(server.url + "/status/quick-1").json()
            return status if status["status"] in ("completed", "failed") else None

        status = wait_until(finished, 120, what="the run to finish")
        elapsed = time.monotonic() - posted
    finally:
        server.stop()
    assert status["status"] == "completed", status
    assert elapsed <= QUICK_S, f"{elapsed:.1f} s from POST /train to completed"
    assert Path(status["output_model_ref"], "adapter_model.safetensors").is_file()
    assert status["metrics"]["base_dir"].endswith("builtin-tiny") or "tiny" in status["metrics"]["base_dir"]
    written = yaml.safe_load((data / "specialists" / "trainer" / "params.tiny.yaml").read_text())
    assert written["specialists"]["base_model"] == "builtin:tiny" and written["specialists"]["sft"]["max_steps"] == 6
    assert (tmp_path / "params.yaml").read_text() == before  # the profile went to the trainer, not params.yaml
    print(f"quick mode: {elapsed:.1f} s from POST /train to completed")
