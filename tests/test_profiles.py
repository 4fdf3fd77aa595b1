"""Profiles: one command switches params.yaml, reversibly, keeping its comments; bad profiles are clear errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from worldagent import profiles
from worldagent.cli import main as cli
from worldagent.config import load_params

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(ROOT / "profiles", tmp_path / "profiles")
    return tmp_path


def test_every_profile_names_the_same_keys_and_all_of_them_exist_in_params_yaml(project: Path) -> None:
    names = profiles.available(project / "profiles")
    assert {"cpu", "gpu", "tiny"} <= set(names)
    keys = {
        name: {key for key, _ in profiles.leaf_keys(profiles.read_profile(name, project / "profiles"))}
        for name in names
    }
    first = keys[names[0]]
    assert all(k == first for k in keys.values()), keys  # otherwise switching back would leave values behind
    for name in names:  # applies cleanly: every key exists, the result validates
        profiles.apply_profile((project / "params.yaml").read_text(), profiles.read_profile(name, project / "profiles"))


def test_switching_there_and_back_restores_params_yaml_byte_for_byte(project: Path) -> None:
    params, directory = project / "params.yaml", project / "profiles"
    before = params.read_text()
    [current] = profiles.matching(params, directory)
    for other in (name for name in profiles.available(directory) if name != current):
        changed = profiles.use_profile(other, params, directory)
        assert changed and profiles.matching(params, directory) == [other]
        after = params.read_text()
        assert after != before and after.count("#") == before.count("#")  # comments kept
        assert load_params(params).model.base == profiles.read_profile(other, directory)["model"]["base"]
        assert profiles.use_profile(current, params, directory) == changed
        assert params.read_text() == before, other


def test_the_cli_switches_and_shows_the_profile(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--params", str(project / "params.yaml"), "--profiles", str(project / "profiles")]
    assert profiles.matching(project / "params.yaml", project / "profiles") == ["cpu"]
    other = "tiny"
    assert cli(["profile", "use", other, *args]) == 0
    assert "model.base" in capsys.readouterr().out
    assert cli(["profile", "show", *args]) == 0
    assert capsys.readouterr().out.strip() == other
    assert cli(["profile", "use", other, *args]) == 0
    assert "already set" in capsys.readouterr().out


def test_unknown_profiles_and_keys_are_one_line_errors(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--params", str(project / "params.yaml"), "--profiles", str(project / "profiles")]
    before = (project / "params.yaml").read_text()
    assert cli(["profile", "use", "huge", *args]) == 2
    assert "no such profile (known: cpu, gpu, tiny)" in capsys.readouterr().err
    (project / "profiles" / "typo.yaml").write_text("sft:\n  epochz: 3\n")
    assert cli(["profile", "use", "typo", *args]) == 2
    assert "`sft.epochz` is not a key of params.yaml" in capsys.readouterr().err
    (project / "profiles" / "invalid.yaml").write_text("sft:\n  epochs: -1\n")
    assert cli(["profile", "use", "invalid", *args]) == 2
    assert "sft.epochs" in capsys.readouterr().err
    assert (project / "params.yaml").read_text() == before  # nothing written on error


def test_params_yaml_is_committed_on_the_cpu_profile() -> None:
    assert profiles.matching(ROOT / "params.yaml", ROOT / "profiles") == ["cpu"]


def test_the_gpu_profile_has_the_full_budgets_and_cpu_the_hour_s_with_each_steps_rows(project: Path) -> None:
    cpu = dict(profiles.leaf_keys(profiles.read_profile("cpu", project / "profiles")))
    gpu = dict(profiles.leaf_keys(profiles.read_profile("gpu", project / "profiles")))
    layout = (
        "batch_size",
        "gradient_accumulation_steps",
        "steps_per_generation",
        "activation_checkpointing",
        "freed_memory",
    )
    budgets = {f"{section}.max_steps" for section in ("sft", "experience", "dpo", "grpo")}
    budgets.add("evaluate.base_max_new_tokens")
    differing = {key for key in cpu if cpu[key] != gpu[key]}
    assert budgets <= differing
    # the hour's other lever: cpu decodes as it trained (bfloat16 where native), gpu in float32
    others = {"evaluate.dtype", "experience.generation_batch_size"}
    assert all(key.endswith(layout) or key in budgets | others for key in differing)
    assert (cpu["evaluate.dtype"], gpu["evaluate.dtype"]) == ("model", "float32")
    # cpu: fewer SFT steps and the post-SFT stages off (0); gpu trains every stage
    assert 0 < cpu["sft.max_steps"] < gpu["sft.max_steps"]
    assert all(cpu[f"{s}.max_steps"] == 0 < gpu[f"{s}.max_steps"] for s in ("experience", "dpo", "grpo"))
    for section in ("sft", "experience", "dpo", "grpo"):  # the same rows per optimizer step, in one micro-batch
        rows = cpu[f"{section}.batch_size"] * cpu[f"{section}.gradient_accumulation_steps"]
        assert (gpu[f"{section}.batch_size"], gpu[f"{section}.gradient_accumulation_steps"]) == (rows, 1)
    # and the same rows a GRPO generate call samples
    assert (
        cpu["grpo.batch_size"] * cpu["grpo.steps_per_generation"]
        == gpu["grpo.batch_size"] * gpu["grpo.steps_per_generation"]
    )


def test_the_old_name_smollm2_picks_cpu_and_says_so(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--params", str(project / "params.yaml"), "--profiles", str(project / "profiles")]
    assert cli(["profile", "use", "tiny", *args]) == 0
    capsys.readouterr()
    assert cli(["profile", "use", "smollm2", *args]) == 0
    out = capsys.readouterr().out
    assert "profile `smollm2` is now called `cpu`" in out and "profile cpu" in out
    assert profiles.matching(project / "params.yaml", project / "profiles") == ["cpu"]
    assert (project / "params.yaml").read_text() == (ROOT / "params.yaml").read_text()
