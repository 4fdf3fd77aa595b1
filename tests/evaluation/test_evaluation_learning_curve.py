"""benchmarks.learning_curve: a share of each component's training stories kept, every held-out one
kept, and the measured SFT paired with the committed one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evaluation_helpers import intent_result

from benchmarks.learning_curve import committed_sft, evenly_kept, generate_command, kept_stories, paired_with
from worldagent.errors import InputError
from worldagent.evaluation.metrics import IntentResult

ROOT = Path(__file__).resolve().parents[2]


def result(intent_id: str, reward: float, passed: bool) -> IntentResult:
    return intent_result(intent_id, reward, story_passed=passed)


def test_kept_indices_are_spread_over_the_whole_list_not_its_first_part() -> None:
    assert evenly_kept(10, 0.5) == [0, 2, 4, 6, 8]
    assert evenly_kept(9, 0.25) == [0, 4]
    assert evenly_kept(4, 1.0) == [0, 1, 2, 3]
    assert evenly_kept(3, 0.1) == [0]  # a component keeps at least one story
    assert evenly_kept(5, 0.5) == [0, 2]  # Python's round: half to even
    assert evenly_kept(0, 0.5) == []


@pytest.mark.parametrize("share", [0.0, -0.5, 1.5])
def test_a_share_outside_zero_to_one_is_refused(share: float) -> None:
    with pytest.raises(InputError, match=f"--share {share}"):
        evenly_kept(5, share)


def test_every_held_out_story_stays_and_each_component_keeps_its_share_in_order() -> None:
    stories = [{"id": f"button#{i}", "component": "button"} for i in range(6)]
    stories += [{"id": f"card#{i}", "component": "card"} for i in range(3)]
    held_out = {"button#1", "card#2"}

    kept = kept_stories(stories, held_out, 0.5)

    ids = [story["id"] for story in kept]
    assert ids == sorted(ids, key=[s["id"] for s in stories].index)  # discovery order
    assert held_out <= set(ids)
    assert [i for i in ids if i.startswith("button") and i not in held_out] == ["button#0", "button#3"]
    assert [i for i in ids if i.startswith("card") and i not in held_out] == ["card#0"]


def test_the_generate_command_reads_the_kept_stories_and_writes_only_under_the_scratch_folder(tmp_path: Path) -> None:
    stories = tmp_path / "data" / "stories.jsonl"
    command = generate_command(ROOT / "params.yaml", stories, tmp_path / "data")
    assert command[0] == "worldagent.world_agent.stages.generate"
    assert command[command.index("--stories") + 1] == str(stories)
    for flag in ("--trajectories", "--eval-trajectories", "--preferences", "--eval-preferences", "--manifest"):
        assert Path(command[command.index(flag) + 1]).parent == tmp_path / "data"
    assert command[command.index("--stories-dir") + 1] == "data/stories"  # the templates are read where they are


def test_pairing_takes_the_shared_intents_and_names_those_that_moved() -> None:
    baseline = [result("a", 1.0, True), result("b", 0.3, False), result("c", 0.5, False)]
    measured = [result("a", 0.4, False), result("b", 1.0, True), result("d", 1.0, True)]

    paired = paired_with(baseline, measured, "half")

    assert paired["intents"] == 2
    assert paired["mean_reward"] == {"baseline": pytest.approx(0.65), "half": pytest.approx(0.7)}
    assert paired["stories_passed"] == {"baseline": 1, "half": 1}
    assert paired["reward_diff"]["mean"] == pytest.approx(0.05)
    assert paired["newly_passed"] == ["b"]
    assert paired["no_longer_passed"] == ["a"]
    with pytest.raises(InputError, match="half and the committed SFT: no intent in common"):
        paired_with(baseline, [result("z", 1.0, True)], "half")


def test_the_committed_sft_rows_are_the_committed_summarys() -> None:
    rows = committed_sft(ROOT / "reports/world_agent/eval.json", ROOT / "reports/world_agent/eval_intents.jsonl")
    summary = json.loads((ROOT / "reports/world_agent/eval.json").read_text(encoding="utf-8"))["models"]["sft"]
    assert len(rows) == summary["n"]
    assert sum(r.story_passed for r in rows) / len(rows) == pytest.approx(summary["story_pass_rate"])
    assert sum(r.reward for r in rows) / len(rows) == pytest.approx(summary["mean_reward"])
