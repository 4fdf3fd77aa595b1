"""Defaults are written once, in worldagent/config/ (one module per concern); params.yaml repeats
them (DVC tracks each key) and may differ only in the keys of its profile (profiles/*.yaml,
worldagent/profiles.py) or where a reason is stated here and next to the value in params.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from worldagent import profiles
from worldagent.config import Params, load_params

PARAMS_YAML = Path(__file__).resolve().parents[1] / "params.yaml"

# dotted key -> why params.yaml deliberately differs from the model default (empty: they agree).
INTENTIONAL_OVERRIDES: dict[str, str] = {}


def leaves(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, child in value.items():
            out.update(leaves(child, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def key_lines(node: yaml.Node, prefix: str = "") -> dict[str, int]:
    """Dotted key -> the 0-based line of its value in params.yaml."""
    out: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = f"{prefix}.{key_node.value}" if prefix else str(key_node.value)
            out[key] = key_node.start_mark.line
            out.update(key_lines(value_node, key))
    return out


def test_params_yaml_loads_and_every_value_is_the_default_or_an_explained_override() -> None:
    load_params(PARAMS_YAML)  # valid: no unknown key
    given = leaves(yaml.safe_load(PARAMS_YAML.read_text(encoding="utf-8")))
    defaults = leaves(Params().model_dump(mode="json"))
    differing = {key for key, value in given.items() if defaults.get(key) != value}
    [profile] = profiles.matching(PARAMS_YAML, PARAMS_YAML.parent / "profiles")
    profile_keys = {
        key for key, _ in profiles.leaf_keys(profiles.read_profile(profile, PARAMS_YAML.parent / "profiles"))
    }
    unexplained = differing - profile_keys - set(INTENTIONAL_OVERRIDES)
    assert not unexplained, {key: (given[key], defaults.get(key)) for key in unexplained}
    text = PARAMS_YAML.read_text(encoding="utf-8")
    lines = text.splitlines()
    where = key_lines(yaml.compose(text))
    for key in INTENTIONAL_OVERRIDES:
        assert "#" in lines[where[key]], f"params.yaml: {key} differs from its default but says nowhere why"


def test_a_loop_guard_of_one_token_is_refused_with_its_key(tmp_path: Path) -> None:
    from worldagent.errors import InputError

    params = yaml.safe_load(PARAMS_YAML.read_text(encoding="utf-8"))
    params["evaluate"]["no_repeat_ngram"] = 1
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    try:
        load_params(path)
    except InputError as error:
        assert "evaluate.no_repeat_ngram" in str(error) and "at least 2" in str(error)
    else:
        raise AssertionError("a 1-gram loop guard was accepted")
