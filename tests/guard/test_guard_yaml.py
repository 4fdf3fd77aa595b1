"""The one YAML loader: alias bombs, depth and size refused before anything is built."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest

from worldagent.errors import InputError
from worldagent.guard.files import NotRegularFileError
from worldagent.guard.yaml import YamlError, YamlLimits, check_yaml, load_roundtrip, load_yaml, read_yaml

PROJECT = Path(__file__).resolve().parents[2]


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """The billion-laughs shape: each level is a list of ``width`` aliases of the one before."""
    text = "a: &a [" + ", ".join(['"lol"'] * width) + "]\n"
    previous = "a"
    for index in range(levels - 1):
        name = f"l{index}"
        text += f"{name}: &{name} [" + ", ".join([f"*{previous}"] * width) + "]\n"
        previous = name
    return text


def test_alias_bomb_is_refused_fast_and_small() -> None:
    text = alias_bomb(levels=12)
    assert len(text) < 1500
    tracemalloc.start()
    started = time.perf_counter()
    with pytest.raises(YamlError, match="alias bomb"):
        load_yaml(text, "params.yaml")
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert seconds < 0.5
    assert peak < 5 * 1024 * 1024


def test_roundtrip_loader_is_guarded_too() -> None:
    with pytest.raises(YamlError, match="alias bomb"):
        load_roundtrip(alias_bomb(), "profiles/x.yaml")


def test_many_aliases_and_recursive_aliases() -> None:
    many = "a: &a 1\nb: [" + ", ".join(["*a"] * 50) + "]\n"
    with pytest.raises(YamlError, match="more than 10 aliases"):
        load_yaml(many, "x.yaml", YamlLimits(max_aliases=10))
    assert load_yaml(many, "x.yaml")["b"] == [1] * 50
    with pytest.raises(YamlError, match="recursive"):
        load_yaml("a: &a [*a]\n", "x.yaml")


def test_depth_and_size_limits() -> None:
    with pytest.raises(YamlError, match=r"x.yaml:1:\d+: nested deeper than 64 levels"):
        load_yaml("[" * 10_000 + "]" * 10_000, "x.yaml")
    with pytest.raises(YamlError, match="more than the 10 allowed"):
        check_yaml("a: 12345678901", "x.yaml", YamlLimits(max_bytes=10))


def test_parse_error_names_line_and_column() -> None:
    with pytest.raises(YamlError, match=r"^x.yaml:3:1: invalid YAML: did not find expected node content"):
        load_yaml("a: 1\nb: [\n", "x.yaml")


def test_surrogate_escape_is_refused() -> None:
    with pytest.raises(InputError, match="x.yaml"):
        load_yaml('a: "\\ud800"\n', "x.yaml")


def test_project_files_load(tmp_path: Path) -> None:
    params = read_yaml(PROJECT / "params.yaml")
    assert "model" in params
    for profile in sorted((PROJECT / "profiles").glob("*.yaml")):
        assert load_roundtrip(profile.read_text(encoding="utf-8"), str(profile))


def test_read_yaml_refuses_a_fifo(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "params.yaml")
    with pytest.raises(NotRegularFileError):
        read_yaml(tmp_path / "params.yaml")
