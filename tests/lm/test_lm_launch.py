"""The accelerate launch paths, exercised on CPU: data-parallel SFT in two processes (the
multi-GPU config, torchrun with gloo), and the DeepSpeed ZeRO-2 config building trl's trainer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from training_fixtures import build_tiny_base, sft_rows, tiny_params, write_jsonl

from tests.databases import free_port
from worldagent.live import read_curve

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs" / "accelerate"


def launch_failure(stderr: str) -> str:
    """Rank 0's own lines first: when it dies, the other rank only reports a closed connection."""
    rank0 = [line for line in stderr.splitlines() if line.startswith("[rank0]")]
    return "\n".join(rank0[-60:]) + "\n---\n" + stderr[-3000:]


# gloo's TCP pairs on a loaded 2-core host sometimes drop while the ranks connect (a known flaky
# class of torch's own distributed tests); such a launch is tried once more, any other failure is not.
GLOO_TRANSPORT_ERRORS = ("Connection closed by peer", "Connection reset by peer")


def accelerate_launch(arguments: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``accelerate launch`` on a free port (a fixed default, 29500, can collide under pytest-xdist),
    launched once more only after a gloo transport error."""
    accelerate = str(Path(sys.executable).parent / "accelerate")
    for _ in range(2):
        command = [accelerate, "launch", "--main_process_port", str(free_port()), *arguments]
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode == 0 or not any(error in done.stderr for error in GLOO_TRANSPORT_ERRORS):
            break
    return done


def sft_arguments(work: Path) -> list[str]:
    return [
        *("--params", str(work / "params.yaml"), "--base", str(work / "base")),
        *("--trajectories", str(work / "trajectories.jsonl"), "--out", str(work / "sft")),
        *("--metrics", str(work / "metrics.json"), "--live", str(work / "live")),
    ]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("launch")
    build_tiny_base(root / "base")
    write_jsonl(root / "trajectories.jsonl", sft_rows())
    (root / "params.yaml").write_text(yaml.safe_dump(tiny_params(sft={"max_steps": 2}).model_dump(mode="json")))
    return root


def test_the_multi_gpu_config_trains_data_parallel_in_two_cpu_processes(work: Path) -> None:
    arguments = ["--config_file", str(CONFIGS / "multi_gpu.yaml"), "--num_processes", "2", "--mixed_precision", "no"]
    env = dict(os.environ, OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
    done = accelerate_launch([*arguments, "-m", "worldagent.pipeline", "run", "sft", *sft_arguments(work)], env)
    assert done.returncode == 0, launch_failure(done.stderr)
    assert done.stderr.count("INFO sft: sft: 2 steps") == 2  # both ranks trained
    assert read_curve(work / "live", "epoch")[-1][1] == 1.0  # 2 steps x batch 2 x 2 processes = the 8 rows once
    assert json.loads((work / "sft" / "stage.json").read_text())["stage"] == "sft"


def test_the_deepspeed_config_builds_the_sft_trainer(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("deepspeed")
    from accelerate.commands.config.config_args import ClusterConfig

    config = ClusterConfig.from_yaml_file(str(CONFIGS / "deepspeed_zero2.yaml"))
    assert config.distributed_type == "DEEPSPEED" and config.deepspeed_config["zero_stage"] == 2
    # What `accelerate launch` exports to each process from the config (one process here).
    monkeypatch.setenv("ACCELERATE_USE_DEEPSPEED", "true")
    monkeypatch.setenv("ACCELERATE_DEEPSPEED_ZERO_STAGE", "2")
    for name, value in {
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": "29533",
        "RANK": "0",
        "LOCAL_RANK": "0",
        "WORLD_SIZE": "1",
    }.items():
        monkeypatch.setenv(name, value)
    from worldagent.lm.sft import build_sft_trainer

    params = tiny_params(sft={"max_steps": 1})
    from worldagent.lm.training import LoraSetup

    setup = LoraSetup(params.seed, params.model, params.lora)
    trainer = build_sft_trainer(
        params.sft, setup, work / "base", work / "trajectories.jsonl", work / "ds-checkpoints"
    ).trainer
    assert trainer.is_deepspeed_enabled
    assert trainer.accelerator.state.deepspeed_plugin.zero_stage == 2


def _prepare_in_rank(rank: int, barrier: Any, directory: str, rounds: int) -> None:
    """One rank of a launch before the trainer creates the process group: prepare the same checkpoint
    directory for new inputs, round after round, meeting the other rank only between rounds."""
    from worldagent.lm.training import FINGERPRINT_FILE, prepare_checkpoints

    for round_ in range(rounds):
        barrier.wait()  # both ranks start the round together, so they race if nothing orders them
        prepare_checkpoints(Path(directory), {"round": round_})
        barrier.wait()  # every rank prepared this round before the next one changes the inputs
        recorded = json.loads((Path(directory) / FINGERPRINT_FILE).read_text(encoding="utf-8"))
        assert recorded == {"round": round_}, recorded


def test_every_rank_of_a_data_parallel_launch_prepares_the_checkpoints_without_racing(tmp_path: Path) -> None:
    # Each rank of `accelerate launch` calls prepare_checkpoints before TrainingArguments creates the
    # process group: one rank deleting the directory for new inputs while another wrote the
    # fingerprint failed the multi-GPU launch.
    import torch.multiprocessing as mp

    barrier = mp.get_context("spawn").Barrier(2)
    # a rank that raises fails the test here (ProcessRaisedException, with the rank's traceback)
    mp.start_processes(
        _prepare_in_rank, args=(barrier, str(tmp_path / "checkpoints"), 30), nprocs=2, start_method="spawn"
    )
    assert json.loads((tmp_path / "checkpoints" / "fingerprint.json").read_text()) == {"round": 29}
