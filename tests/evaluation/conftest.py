from __future__ import annotations

import json

import pytest
from evaluation_helpers import DATA


@pytest.fixture(scope="session")
def eval_rows() -> list[dict]:
    from worldagent.world_agent.evaluate import load_eval_rows

    return load_eval_rows(DATA / "trajectories.eval.jsonl")


@pytest.fixture(scope="session")
def token_files() -> dict[str, list[str]]:
    from worldagent.world_agent.evaluate import load_token_files

    return load_token_files(DATA / "stories.jsonl")


@pytest.fixture(scope="session")
def rejected() -> dict[tuple[str, str], str]:
    """(story id, degradation) -> the rejected output of the eval preference pairs."""
    pairs = [
        json.loads(line)
        for line in (DATA / "dpo-preferences.eval.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return {(pair["id"], pair["degradation"]): pair["rejected"][0]["content"] for pair in pairs}


@pytest.fixture(scope="session")
def tiny_model():
    """(model, tokenizer): the random-init tiny causal LM of the policy tests, call markers as single tokens."""
    from tests.lm.model_fixtures import tiny_model_and_tokenizer

    return tiny_model_and_tokenizer()
