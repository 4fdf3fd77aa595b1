"""The run's preflight: bfloat16 on a CPU that only emulates it stops a run at once, with the fix;
every setting that runs at its intended speed passes, and so does an explicit go-ahead."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from flows._stages import flow_main, run_pipelines
from flows._stages import preflight as flows_preflight
from worldagent.cli import main as cli
from worldagent.config import load_params
from worldagent.errors import EXIT_INPUT_ERROR
from worldagent.pipeline.families import PIPELINES
from worldagent.pipeline.intervention import PIPELINE as INTERVENTION
from worldagent.pipeline.world_agent import PIPELINE as WORLD_AGENT
from worldagent.preflight import ALLOW_SLOW_BFLOAT16, PrecisionError, check_precision

ROOT = Path(__file__).resolve().parents[1]


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
    monkeypatch.setattr("worldagent.policy.device.cpu_multiplies_bfloat16", emulated)
    monkeypatch.setattr("worldagent.policy.device.select_device", lambda: "cpu")
    monkeypatch.delenv(ALLOW_SLOW_BFLOAT16, raising=False)


def test_bfloat16_on_a_cpu_without_it_is_refused_naming_the_file_the_key_and_the_fix(tmp_path: Path) -> None:
    path = write_params(tmp_path, "bfloat16")
    with pytest.raises(PrecisionError) as raised:
        check_precision(load_params(path), path, device="cpu", native_bfloat16=emulated, environ={})
    message = str(raised.value)
    assert str(path) in message and "model.dtype" in message
    assert "model.dtype: prefer-bfloat16" in message and ALLOW_SLOW_BFLOAT16 in message


def test_bfloat16_decoding_alone_is_refused_too_naming_its_key(tmp_path: Path) -> None:
    path = write_params(tmp_path, "prefer-bfloat16", evaluate_dtype="bfloat16")
    with pytest.raises(PrecisionError, match=r"evaluate\.dtype is bfloat16") as raised:
        check_precision(load_params(path), path, device="cpu", native_bfloat16=emulated, environ={})
    assert "`evaluate.dtype: prefer-bfloat16`" in str(raised.value) and "model.dtype" not in str(raised.value)
    both = write_params(tmp_path, "bfloat16", evaluate_dtype="bfloat16")
    with pytest.raises(PrecisionError, match=r"model\.dtype and evaluate\.dtype are bfloat16"):
        check_precision(load_params(both), both, device="cpu", native_bfloat16=emulated, environ={})
    check_precision(load_params(both), both, device="cpu", native_bfloat16=native, environ={})


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
    check_precision(load_params(path), path, device=device, native_bfloat16=is_native, environ=environ)


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
