"""The model card: front matter the Hub understands, metrics, provenance, params; deterministic."""

from __future__ import annotations

import yaml

from worldagent.registry.modelcard import render_model_card

METRICS = {
    "grpo": {"mean_reward": 0.71234, "story_pass_rate": 0.5},
    "base": {"mean_reward": 0.1, "story_pass_rate": 0.0},
}
PARAMS = {"seed": 1234, "lora": {"r": 16, "alpha": 16}, "model": {"base": "google/functiongemma-270m-it"}}


def card(**overrides: object) -> str:
    args: dict[str, object] = dict(
        family="world-agent",
        version=3,
        base_model="google/functiongemma-270m-it",
        metrics=METRICS,
        data_hash="d" * 64,
        git_revision="0123456789abcdef",
        params=PARAMS,
        candidate="grpo",
    )
    args.update(overrides)
    return render_model_card(**args)  # type: ignore[arg-type]


def test_front_matter_metrics_provenance_and_params() -> None:
    text = card()
    assert text.startswith("---\n")
    front = yaml.safe_load(text.split("---", 2)[1])
    assert front["library_name"] == "peft"
    assert front["base_model"] == "google/functiongemma-270m-it"
    assert "peft" in front["tags"] and "world-agent" in front["tags"]
    assert "# world-agent v3" in text
    assert "| metric | grpo | base |" in text
    assert "| mean_reward | 0.7123 | 0.1000 |" in text
    assert "| story_pass_rate | 0.5000 | 0.0000 |" in text
    assert f"`{'d' * 64}`" in text and "`0123456789abcdef`" in text
    assert "## Intended use" in text
    params_block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert yaml.safe_load(params_block) == PARAMS


def test_deterministic_and_local_base_is_not_claimed_as_a_hub_model() -> None:
    assert card() == card()
    local = card(base_model="builtin:tiny", metrics={"mean_reward": 0.3}, git_revision=None, data_hash=None)
    front = yaml.safe_load(local.split("---", 2)[1])
    assert "base_model" not in front  # the Hub rejects a base_model that is not a repo id
    assert "`builtin:tiny`" in local and "| mean_reward | 0.3000 |" in local
    assert "| git revision | n/a |" in local
