"""The run's preflight: bfloat16 on a CPU that only emulates it stops a run at once, with the fix;
every setting that runs at its intended speed passes, and so does an explicit go-ahead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from flows._stages import flow_main, run_pipelines
from flows._stages import preflight as flows_preflight
from worldagent.cli import main as cli
from worldagent.config import EvaluateParams, ModelParams, load_params
from worldagent.errors import EXIT_INPUT_ERROR
from worldagent.pipeline.families import PIPELINES
from worldagent.pipeline.intervention import PIPELINE as INTERVENTION
from worldagent.pipeline.world_agent import PIPELINE as WORLD_AGENT
from worldagent.preflight import (
    ALLOW_SLOW_BFLOAT16,
    PrecisionError,
    check_precision,
    precision_note,
    recorded_precisions,
)

ROOT = Path(__file__).resolve().parents[1]


def sections(path: Path) -> tuple[ModelParams, EvaluateParams]:
    """What check_precision reads of a params file: ``model`` and ``evaluate``."""
    params = load_params(path)
    return params.model, params.evaluate


def write_params(directory: Path, dtype: str, evaluate_dtype: str = "float32") -> Path:
    """The project's params.yaml with ``model.dtype`` and ``evaluate.dtype`` set, whatever profile it holds."""
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["model"]["dtype"] = dtype
    raw["evaluate"]["dtype"] = evaluate_dtype
    path = directory / "params.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


def emulated() -> bool:
    return False


def native() -> bool:
    return True


@pytest.fixture
def emulating_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stages would run on a CPU that only emulates bfloat16, and nobody said go ahead."""
    monkeypatch.setattr("worldagent.lm.device.cpu_multiplies_bfloat16", emulated)
    monkeypatch.setattr("worldagent.lm.device.select_device", lambda: "cpu")
    monkeypatch.delenv(ALLOW_SLOW_BFLOAT16, raising=False)


def test_bfloat16_on_a_cpu_without_it_is_refused_naming_the_file_the_key_and_the_fix(tmp_path: Path) -> None:
    path = write_params(tmp_path, "bfloat16")
    with pytest.raises(PrecisionError) as raised:
        check_precision(*sections(path), path, device="cpu", native_bfloat16=emulated, environ={})
    message = str(raised.value)
    assert str(path) in message and "model.dtype" in message
    assert "model.dtype: prefer-bfloat16" in message and ALLOW_SLOW_BFLOAT16 in message


def test_bfloat16_decoding_alone_is_refused_too_naming_its_key(tmp_path: Path) -> None:
    path = write_params(tmp_path, "prefer-bfloat16", evaluate_dtype="bfloat16")
    with pytest.raises(PrecisionError, match=r"evaluate\.dtype is bfloat16") as raised:
        check_precision(*sections(path), path, device="cpu", native_bfloat16=emulated, environ={})
    assert "`evaluate.dtype: prefer-bfloat16`" in str(raised.value) and "model.dtype" not in str(raised.value)
    both = write_params(tmp_path, "bfloat16", evaluate_dtype="bfloat16")
    with pytest.raises(PrecisionError, match=r"model\.dtype and evaluate\.dtype are bfloat16"):
        check_precision(*sections(both), both, device="cpu", native_bfloat16=emulated, environ={})
    check_precision(*sections(both), both, device="cpu", native_bfloat16=native, environ={})


@pytest.mark.parametrize(
    ("dtype", "device", "is_native", "environ"),
    [
        ("bfloat16", "cpu", native, {}),  # AVX-512 / AMX: oneDNN multiplies bfloat16
        ("bfloat16", "cuda", emulated, {}),  # a GPU: the CPU's instructions do not matter
        ("auto", "cpu", emulated, {}),  # auto is float32 on a CPU
        ("prefer-bfloat16", "cpu", emulated, {}),  # float32 on this CPU
        ("float32", "cpu", emulated, {}),
        ("bfloat16", "cpu", emulated, {ALLOW_SLOW_BFLOAT16: "1"}),  # the user said go ahead
    ],
)
def test_settings_that_run_at_their_intended_speed_pass(
    tmp_path: Path, dtype: str, device: str, is_native, environ: dict[str, str]
) -> None:
    path = write_params(tmp_path, dtype)
    check_precision(*sections(path), path, device=device, native_bfloat16=is_native, environ=environ)


@pytest.mark.usefixtures("emulating_cpu")
def test_the_command_line_check_exits_2_with_the_fix_and_0_when_the_settings_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    slow = write_params(tmp_path, "bfloat16")
    assert cli(["preflight", "--params", str(slow)]) == EXIT_INPUT_ERROR
    assert "model.dtype is bfloat16" in capsys.readouterr().err
    # The specialists' trainer service trains in model.dtype too: it refuses before it serves.
    monkeypatch.setattr("uvicorn.run", lambda *_, **__: pytest.fail("the trainer service started"))
    assert cli(["trainer", "serve", "--params", str(slow), "--data-dir", str(tmp_path)]) == EXIT_INPUT_ERROR
    assert "model.dtype is bfloat16" in capsys.readouterr().err
    fine = write_params(tmp_path, "auto")
    assert cli(["preflight", "--params", str(fine)]) == 0


@pytest.mark.usefixtures("emulating_cpu")
def test_a_flow_stops_before_submitting_any_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_params(tmp_path, "bfloat16")
    submitted: list[str] = []
    monkeypatch.setattr("flows._stages.submit_pipeline", lambda pipeline, *_: submitted.append(pipeline.family))
    with pytest.raises(PrecisionError):
        run_pipelines(PIPELINES, tmp_path, deploy=False)
    assert submitted == []


def test_no_stage_depends_on_the_preflight() -> None:
    # A check that changes must never make DVC rerun a stage (worldagent/preflight.py's promise).
    assert "worldagent/preflight.py" not in (ROOT / "dvc.yaml").read_text(encoding="utf-8")


@pytest.mark.usefixtures("emulating_cpu")
def test_a_flow_command_refuses_before_prefect_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # flow_main changes directory to --root; the test's own is restored
    write_params(tmp_path, "bfloat16")

    class NeverStarted:
        def with_options(self, **_: object) -> NeverStarted:
            pytest.fail("the flow was configured, so Prefect would start")

    assert flow_main("a flow", NeverStarted(), PIPELINES, ["--root", str(tmp_path)]) == EXIT_INPUT_ERROR
    assert "model.dtype is bfloat16" in capsys.readouterr().err


@pytest.mark.usefixtures("emulating_cpu")
def test_only_a_family_whose_stages_read_model_dtype_is_held_to_it(tmp_path: Path) -> None:
    write_params(tmp_path, "bfloat16")
    flows_preflight([INTERVENTION], tmp_path)  # the intervention predictor never reads model.dtype
    with pytest.raises(PrecisionError):
        flows_preflight([WORLD_AGENT], tmp_path)


def write_training_metrics(root: Path, precisions: dict[str, str]) -> None:
    """The world-agent trainers' metrics files under ``root``, each recording a precision where the
    stage writes it (the experience stage under ``training``)."""
    for step in WORLD_AGENT.steps:
        if getattr(step, "name", None) in precisions:
            [metrics] = step.metrics.values()
            path = root / metrics
            path.parent.mkdir(parents=True, exist_ok=True)
            record = {"precision": precisions[step.name]}
            path.write_text(json.dumps({"training": record} if step.name == "experience" else record), encoding="utf-8")


def test_the_committed_precisions_are_read_from_each_training_stages_metrics(tmp_path: Path) -> None:
    write_training_metrics(tmp_path, {"sft": "bfloat16 on cpu", "experience": "float32 on cpu"})
    evaluation = tmp_path / "reports/intervention/evaluation_metrics.json"  # a classifier's precision: a number
    evaluation.parent.mkdir(parents=True)
    evaluation.write_text(json.dumps({"precision": 0.87}), encoding="utf-8")
    assert recorded_precisions(PIPELINES, tmp_path) == {"sft": "bfloat16 on cpu", "experience": "float32 on cpu"}
    assert recorded_precisions(PIPELINES, tmp_path / "nothing-yet") == {}


@pytest.mark.usefixtures("emulating_cpu")
def test_training_here_in_another_precision_than_the_committed_run_is_noted(tmp_path: Path) -> None:
    params = load_params(write_params(tmp_path, "prefer-bfloat16"))  # float32 on this CPU
    note = precision_note(params.model, {"sft": "bfloat16 on cpu", "dpo": "bfloat16 on cpu", "grpo": "float32 on cpu"})
    assert note is not None
    assert "trains in float32 on cpu here" in note and "trained sft, dpo in bfloat16 on cpu" in note
    assert "grpo" not in note  # it trained as this machine would
    assert precision_note(params.model, {"sft": "float32 on cpu"}) is None
    assert precision_note(params.model, {}) is None
    assert precision_note(params.model, {"sft": "float32 on cpu"}, device="cuda") is not None  # a GPU trains elsewhere


@pytest.mark.usefixtures("emulating_cpu")
def test_preflight_notes_the_other_precision_and_still_lets_the_run_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    path = write_params(tmp_path, "prefer-bfloat16")
    write_training_metrics(tmp_path, {"sft": "bfloat16 on cpu"})
    assert cli(["preflight", "--params", str(path)]) == 0
    assert "note: `model.dtype: prefer-bfloat16` trains in float32 on cpu here" in capsys.readouterr().out
    with caplog.at_level("WARNING", logger="flows"):
        flows_preflight([WORLD_AGENT], tmp_path, warn=False)  # flow_main's check before Prefect starts
        assert caplog.text == ""
        flows_preflight([WORLD_AGENT], tmp_path)
    assert "committed run trained sft in bfloat16 on cpu" in caplog.text
    write_training_metrics(tmp_path, {"sft": "float32 on cpu"})
    assert cli(["preflight", "--params", str(path)]) == 0
    assert "note:" not in capsys.readouterr().out
