"""A persistent out (``Stage.persist``): real DVC keeps it in place before the stage runs, so a store grows
run after run, and ``dvc pull`` restores it (the experience store's mechanism)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from tests.harness import dvc
from worldagent.pipeline.deps import code_deps
from worldagent.pipeline.dvcfile import HEADER, stage_lines
from worldagent.pipeline.table import LiveFolder, Plot, Stage
from worldagent.pipeline.world_agent import PIPELINE as WORLD_AGENT

PROJECT = Path(__file__).resolve().parents[2]

# The stage appends its input to the store it finds: what the experience stage does with its samples.
GROW = """
import argparse
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--note", type=Path, required=True)
parser.add_argument("--store", type=Path, required=True)
args = parser.parse_args()
args.store.mkdir(exist_ok=True)
log = args.store / "log"
log.write_text((log.read_text() if log.exists() else "") + args.note.read_text())
"""
STAGE = Stage(
    name="grow",
    entry="worldagent.grow:main",
    description="append the note to the store",
    inputs={"note": "note.txt"},
    outputs={"store": "store"},
    persist=("store",),
)


def test_a_stage_lists_the_config_modules_of_the_params_it_declares() -> None:
    def config_deps(lines: list[str]) -> set[str]:
        [stage] = yaml.safe_load("\n".join(lines)).values()
        return {dep for dep in stage["deps"] if dep.startswith("worldagent/config/")}

    sft = config_deps(stage_lines(WORLD_AGENT.stage("sft"), PROJECT))
    evaluate_sft = config_deps(stage_lines(WORLD_AGENT.stage("evaluate_sft"), PROJECT))
    assert "worldagent/config/training.py" in sft and "worldagent/config/evaluation.py" not in sft
    assert "worldagent/config/evaluation.py" in evaluate_sft and "worldagent/config/training.py" not in evaluate_sft
    committed = yaml.safe_load((PROJECT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    assert "worldagent/config/evaluation.py" not in committed["sft"]["deps"]
    assert "worldagent/config/evaluation.py" in committed["evaluate_sft"]["deps"]


def test_a_dvclive_folder_declares_its_metrics_and_the_plots_it_names_with_their_templates() -> None:
    roc = Plot("plots/sklearn/roc", x="fpr", y="tpr", template="simple", x_label="false positive rate")
    stage = Stage(
        name="judge",
        entry="worldagent.live:open_live",  # any project module: only the rendering is checked
        description="d",
        live={"curves": "reports/train", "live": LiveFolder("reports/eval", plots=(roc,))},
    )
    [rendered] = yaml.safe_load("\n".join(stage_lines(stage, PROJECT))).values()
    assert rendered["cmd"].endswith("--curves reports/train --live reports/eval")
    assert rendered["metrics"] == [
        {"reports/train/metrics.json": {"cache": False}},
        {"reports/eval/metrics.json": {"cache": False}},
    ]
    assert rendered["plots"] == [
        # a path alone is a training stage's folder: its curves by step
        {"reports/train/plots/metrics": {"cache": False, "x": "step"}},
        {
            "reports/eval/plots/sklearn/roc": {
                "cache": False,
                "template": "simple",
                "x": "fpr",
                "y": "tpr",
                "x_label": "false positive rate",
            }
        },
    ]


def test_persist_must_name_an_output() -> None:
    with pytest.raises(ValueError, match="persist names nope"):
        Stage(name="s", entry="worldagent.s:run", description="d", outputs={"out": "o"}, persist=("nope",))


@pytest.mark.slow
def test_a_persistent_store_grows_across_runs_and_comes_back_with_pull(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    (root / "worldagent").mkdir(parents=True)
    (root / "worldagent" / "__init__.py").write_text("")
    (root / "worldagent" / "grow.py").write_text(GROW)
    # this project has no stage entry of its own: the stage runs its module as a script
    script = ["python -m worldagent.grow", "--note note.txt", "--store store"]
    monkeypatch.setattr("worldagent.pipeline.dvcfile.command", lambda stage: script)
    monkeypatch.setattr(
        "worldagent.pipeline.dvcfile.stage_code", lambda stage, root: code_deps(root, ["worldagent.grow"])
    )
    (root / "dvc.yaml").write_text(HEADER + "stages:\n" + "\n".join(stage_lines(STAGE, root)) + "\n")
    assert "persist: true" in (root / "dvc.yaml").read_text()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    dvc(root, "init", "-q")
    dvc(root, "remote", "add", "-d", "store", str(tmp_path / "remote"))

    (root / "note.txt").write_text("week 1\n")
    dvc(root, "repro")
    (root / "note.txt").write_text("week 2\n")
    dvc(root, "repro")
    assert (root / "store" / "log").read_text() == "week 1\nweek 2\n"
    assert "up to date" in dvc(root, "status")

    dvc(root, "push")
    (root / "store" / "log").unlink()
    (root / "store").rmdir()
    dvc(root, "pull")  # a fresh machine: next week's run starts from this week's store
    assert (root / "store" / "log").read_text() == "week 1\nweek 2\n"
    (root / "note.txt").write_text("week 3\n")
    dvc(root, "repro")
    assert (root / "store" / "log").read_text() == "week 1\nweek 2\nweek 3\n"
