"""The specialists' model side: base-model resolution, the short LoRA SFT, and evaluation.

Heavy imports (torch, transformers, trl, peft) happen inside the functions, so the services that
import this module start fast; training runs in the trainer's worker process.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from worldagent.config import Params
from worldagent.errors import RunError
from worldagent.io import canonical_json, jsonl
from worldagent.specialists.decisions import (
    ACTIONS,
    GENERIC_SYSTEM_PROMPT,
    SYSTEM_PROMPT,
    as_browser_action,
    as_browser_input,
    parse_action,
    prompt_messages,
    render_action,
    render_browser_prompt,
)

log = logging.getLogger(__name__)

DEFAULT_BASE = "models/world_agent/base"
BUILTIN_TINY = "builtin:tiny"
BASE_CACHE = "base-cache"


class SpecialistBaseUnavailable(RunError, FileNotFoundError):
    """The configured base model is missing and cannot be built here."""


# --------------------------------------------------------------------------- base model


def tokenizer_corpus() -> list[str]:
    """Deterministic text the builtin specialist base's tokenizer is trained on (browser decisions)."""
    elements = [
        "button",
        "link",
        "textbox",
        "checkbox",
        "heading",
        "combobox",
        "menuitem",
        "tab",
        "searchbox",
        "listitem",
    ]
    names = [
        "Submit",
        "Search",
        "Sign in",
        "Next",
        "Email",
        "Password",
        "Cart",
        "Checkout",
        "Settings",
        "Home",
        "Save",
        "Cancel",
    ]
    texts = [SYSTEM_PROMPT, GENERIC_SYSTEM_PROMPT]
    for i, (element, name) in enumerate((e, n) for e in elements for n in names):
        action = ACTIONS[i % len(ACTIONS)]
        selector = f"#{name.lower().replace(' ', '-')}" if i % 2 else f"[ref=e{i}]"
        value = (
            "https://example.com/" + name.lower().replace(" ", "-")
            if action == "navigate"
            else (f"{name.lower()} text" if action == "fill" else None)
        )
        snapshot = f'- {element} "{name}" [ref=e{i}]\n- heading "Page {i}" [level=1]\n<{element} id="{name.lower()}">{name}</{element}>'
        texts.append(render_browser_prompt(snapshot, f"{action} the {name} {element}", []))
        texts.append(render_action({"action": action, "selectorOrRef": selector, "value": value}))
    return texts


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_builtin_base(params: Params, cache_dir: Path) -> Path:
    """Build (once; atomically, under a file lock) the builtin tiny base for specialists into ``cache_dir``.

    A small Gemma-3 sized by ``model.tiny`` with a tokenizer trained on :func:`tokenizer_corpus`;
    random init (the short fine-tune learns the answer format). Same params → same directory.
    """
    from worldagent.policy.base import build_tiny_model, save_base
    from worldagent.policy.tokenizer import train_tokenizer

    tiny = params.model.tiny
    key = hashlib.sha256(
        canonical_json({"tiny": tiny.model_dump(), "seed": params.seed, "corpus": tokenizer_corpus()}).encode()
    ).hexdigest()[:12]
    out = Path(cache_dir) / f"tiny-{key}"
    if (out / "base.json").is_file():
        return out
    with _file_lock(Path(cache_dir) / ".build.lock"):
        if (out / "base.json").is_file():
            return out
        tokenizer = train_tokenizer(tokenizer_corpus(), tiny.vocab_size)
        model = build_tiny_model(tiny, tokenizer, params.seed)
        save_base(
            model,
            tokenizer,
            {"kind": "specialists:builtin-tiny", "base": BUILTIN_TINY, "seed": params.seed, "tiny": tiny.model_dump()},
            out,
        )
    return out


def resolve_base(base_model: str, params: Params, cache_dir: Path) -> Path:
    """The base directory to fine-tune: ``base_model`` when it exists, else the cached builtin tiny.

    The builtin fallback applies to the default (``models/world_agent/base``, a DVC output that a
    fresh clone lacks) and to ``builtin:tiny``; any other missing path is an error naming the fix.
    """
    path = Path(base_model)
    if base_model != BUILTIN_TINY and (path / "base.json").is_file():
        return path
    if base_model in (DEFAULT_BASE, BUILTIN_TINY) or path.as_posix().endswith(DEFAULT_BASE):
        return build_builtin_base(params, cache_dir)
    raise SpecialistBaseUnavailable(
        f"specialists.base_model {base_model!r} is not a base model directory (no base.json); "
        f"build the world-agent base with `dvc repro base`, or set specialists.base_model to {DEFAULT_BASE!r} or {BUILTIN_TINY!r}"
    )


# --------------------------------------------------------------------------- training


def training_params(params: Params) -> Params:
    """The global params with the specialists' LoRA and SFT sections in the trainers' places."""
    spec = params.specialists
    return params.model_copy(update={"lora": spec.lora, "sft": spec.sft})


def train_specialist(
    params: Params, base_dir: Path, conversations: Sequence[Mapping[str, Any]], out_dir: Path, work_dir: Path
) -> dict[str, Any]:
    """A short LoRA SFT (trl ``SFTTrainer`` via :func:`worldagent.policy.sft.train_sft`); the adapter is written atomically."""
    from worldagent.policy.sft import train_sft

    work_dir.mkdir(parents=True, exist_ok=True)
    data = work_dir / "train.jsonl"
    data.write_text(jsonl(conversations), encoding="utf-8")
    started = time.perf_counter()
    metrics = train_sft(
        training_params(params), Path(base_dir), data, Path(out_dir), checkpoints=work_dir / "checkpoints"
    )
    metrics["total_s"] = round(time.perf_counter() - started, 3)
    return metrics


# --------------------------------------------------------------------------- evaluation


def adapter_base_dir(adapter_dir: Path) -> Path:
    from worldagent.policy.training import read_stage

    info = read_stage(Path(adapter_dir))
    return Path(info["base_dir"])


def action_metrics(pairs: Sequence[tuple[Any, str]]) -> dict[str, Any]:
    """(expected output, generated text) → action accuracy, exact match and parse rate."""
    n = len(pairs)
    parsed = correct_action = exact = 0
    for expected, text in pairs:
        want = as_browser_action(expected)
        got = parse_action(text)
        if got is None or want is None:
            continue
        parsed += 1
        if got.action == want.action:
            correct_action += 1
            if got.selectorOrRef == want.selectorOrRef and (got.value or None) == (want.value or None):
                exact += 1
    return {
        "n": n,
        "action_accuracy": correct_action / n if n else None,
        "exact_match": exact / n if n else None,
        "parse_rate": parsed / n if n else None,
    }


def generate_answers(
    adapter_dir: Path, inputs: Sequence[Any], max_new_tokens: int, base_dir: Path | None = None
) -> list[str]:
    """Greedy answers of base + adapter for each input (CPU-friendly, one prompt at a time)."""
    import torch

    from worldagent.policy.load import load_policy

    adapter_dir = Path(adapter_dir)
    model, tokenizer = load_policy(base_dir or adapter_base_dir(adapter_dir), adapter_dir, device="cpu")
    answers = []
    with torch.no_grad():
        for value in inputs:
            ids = tokenizer.apply_chat_template(
                prompt_messages(value), add_generation_prompt=True, return_tensors="pt", return_dict=True
            )
            out = model.generate(**ids, max_new_tokens=max_new_tokens, do_sample=False)
            answers.append(tokenizer.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True))
    return answers


def evaluate_adapter(adapter_dir: Path, rows: Sequence[Mapping[str, Any]], max_new_tokens: int = 48) -> dict[str, Any]:
    """Action accuracy of the adapter on held-out good browser-decision rows (real generation)."""
    usable = [
        r
        for r in rows
        if r.get("label") == "good"
        and as_browser_input(r.get("input")) is not None
        and as_browser_action(r.get("output")) is not None
    ]
    started = time.perf_counter()
    answers = generate_answers(Path(adapter_dir), [r["input"] for r in usable], max_new_tokens) if usable else []
    metrics = action_metrics([(r["output"], a) for r, a in zip(usable, answers, strict=True)])
    metrics["seconds"] = round(time.perf_counter() - started, 3)
    pairs = list(zip(usable, answers, strict=True))
    metrics["examples"] = [{"expected": r["output"], "answer": a} for r, a in pairs[:5]]
    return metrics
