"""The one end-to-end harness of the DAG tests: a copy of the project in a temporary folder, with
its own params, run through the real `dvc`, `python -m flows.*` and `python -m tasks.*` commands."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from worldagent import profiles

PROJECT = Path(__file__).resolve().parents[1]
CODE = ("worldagent", "flows", ".dvc")
# A world-agent DAG that runs end to end in minutes: three components, a tiny model, a few steps.
TINY_COMPONENTS = ("button", "badge", "toggle-button")
TINY = {
    "generate": {"eval_split": "component", "eval_components": ["badge"], "max_pairs_per_story": 2},
    "model": {
        "tiny": {
            "vocab_size": 800,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "head_dim": 16,
            "sliding_window": 64,
        },
        "pretrain": {"epochs": 0.2, "batch_size": 4, "max_length": 128},
    },
    "lora": {"r": 4, "alpha": 4},
    "sft": {"max_steps": 2, "batch_size": 2, "max_length": 2600, "logging_steps": 1},
    "experience": {
        "max_prompts": 2,
        "samples_per_prompt": 2,
        "max_new_tokens": 16,
        "max_steps": 1,
        "batch_size": 2,
        "max_length": 2600,
    },
    "dpo": {"max_steps": 2, "batch_size": 2, "max_length": 2600, "logging_steps": 1},
    "grpo": {
        "probe_generations": 2,
        "max_steps": 1,
        "batch_size": 2,
        "num_generations": 2,
        "max_completion_length": 16,
        "max_prompts": 2,
        "max_length": 4096,
        "logging_steps": 1,
    },
    "evaluate": {"max_new_tokens": 16, "base_max_new_tokens": None, "max_intents": 2, "batch_size": 2},
    "compare": {"bootstrap_samples": 200},
}


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def env(root: Path) -> dict[str, str]:
    return dict(
        os.environ,
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        HF_HUB_OFFLINE="1",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_HOME=str(root / ".prefect"),
    )


def run(root: Path, *args: str, check: bool = True, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=root, env=env(root), capture_output=True, text=True, timeout=timeout)
    if check:
        assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


def dvc(root: Path, *args: str) -> str:
    done = run(root, str(Path(sys.executable).parent / "dvc"), *args)
    return done.stdout + done.stderr


def python(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run(root, sys.executable, *args, check=check)


def tiny_params_raw() -> dict[str, Any]:
    """The project's params.yaml under the ``tiny`` profile, whatever profile it holds: the tests'
    profile (``make pipeline``'s default trains a real base for hours)."""
    text = (PROJECT / "params.yaml").read_text(encoding="utf-8")
    tiny = profiles.read_profile("tiny", PROJECT / "profiles")
    return yaml.safe_load(profiles.apply_profile(text, tiny, PROJECT / "params.yaml"))


def copy_project(root: Path, params: Mapping[str, Any] | None = None, components: Iterable[str] | None = ()) -> Path:
    """The code, dvc.yaml and `.dvc/` under ``root`` (a new git repository), params.yaml merged with
    ``params``, and the bundled stories of ``components`` (None: every component)."""
    for name in ("dvc.yaml", ".dvcignore"):
        shutil.copy(PROJECT / name, root / name)
    raw = merge(tiny_params_raw(), params or {})
    stories = PROJECT / "data" / "stories"
    copied = sorted(p.name for p in stories.iterdir()) if components is None else list(components)
    generate = raw.setdefault("generate", {})
    # generate.heldout names stories of every bundled component, and a pattern that matches nothing is an
    # error: keep those of the components copied (a pattern's first path segment is its component).
    generate["heldout"] = [p for p in generate.get("heldout") or [] if p.split("/", 1)[0] in copied]
    (root / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "tmp", "cache")
    for name in CODE:
        shutil.copytree(PROJECT / name, root / name, ignore=ignore)
    for champion in PROJECT.glob("models/*/champion.json"):  # the pinned champion references
        (root / champion.relative_to(PROJECT)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(champion, root / champion.relative_to(PROJECT))
    for component in copied:
        shutil.copytree(stories / component, root / "data" / "stories" / component)
    run(root, "git", "init", "-q")
    # a project has commits: DVCLive (and dvc exp) need one to start from
    run(root, "git", "add", "-A")
    run(root, "git", "-c", "user.name=tests", "-c", "user.email=tests@localhost", "commit", "-qm", "the project")
    return root


def flow_result(stdout: str) -> dict[str, Any]:
    """The JSON result `python -m flows.*` prints last (log lines before it may hold braces too)."""
    import json
    import re

    start = [match.start() for match in re.finditer(r"^\{$", stdout, re.MULTILINE)]
    assert start, f"no flow result in:\n{stdout[-3000:]}"
    return json.loads(stdout[start[-1] :])
