"""The specialists' model side: base-model resolution, the short LoRA SFT, and evaluation.

Heavy imports (torch, transformers, trl, peft) happen inside the functions, so the services that
import this module start fast; training runs in the trainer's worker process.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from worldagent.config import ModelParams, SpecialistsParams, TinyModelParams
from worldagent.errors import RunError
from worldagent.io import canonical_json, jsonl
from worldagent.specialists.browser_set import feedback_rows, generate_decisions
from worldagent.specialists.decisions import (
    ACTIONS,
    GENERIC_SYSTEM_PROMPT,
    SYSTEM_PROMPT,
    as_browser_action,
    as_browser_input,
    parse_action,
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
    for row in feedback_rows(generate_decisions(0, 40, "train")):  # the embedded set's pages and tasks
        texts.append(render_browser_prompt(row["input"]["pageSnapshot"], row["input"]["task"], []))
        texts.append(render_action(row["output"]))
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


def build_builtin_base(tiny: TinyModelParams, seed: int, cache_dir: Path) -> Path:
    """Build (once; atomically, under a file lock) the builtin tiny base for specialists into ``cache_dir``.

    A small Gemma-3 sized by ``tiny`` (``model.tiny``), initialised from ``seed``, with a tokenizer trained on :func:`tokenizer_corpus`;
    random init (the short fine-tune learns the answer format). Same params → same directory.
    """
    from worldagent.lm.base import build_tiny_model, save_base
    from worldagent.lm.tokenizer import train_tokenizer

    key = hashlib.sha256(
        canonical_json({"tiny": tiny.model_dump(), "seed": seed, "corpus": tokenizer_corpus()}).encode()
    ).hexdigest()[:12]
    out = Path(cache_dir) / f"tiny-{key}"
    if (out / "base.json").is_file():
        return out
    with _file_lock(Path(cache_dir) / ".build.lock"):
        if (out / "base.json").is_file():
            return out
        tokenizer = train_tokenizer(tokenizer_corpus(), tiny.vocab_size)
        model = build_tiny_model(tiny, tokenizer, seed)
        save_base(
            model,
            tokenizer,
            {"kind": "specialists:builtin-tiny", "base": BUILTIN_TINY, "seed": seed, "tiny": tiny.model_dump()},
            out,
        )
    return out


def build_cached_packaged_base(name: str, seed: int, cache_dir: Path) -> Path:
    """Convert packaged base ``name`` (``smollm2-135m``, ``gemma3-270m``) once into ``cache_dir/<name>``.

    Atomic (:func:`worldagent.lm.pretrained.build_packaged_base` writes through a temporary
    directory) and under a file lock, so concurrent workers build it once.
    """
    from worldagent.lm.pretrained import build_packaged_base

    out = Path(cache_dir) / name
    if (out / "base.json").is_file():
        return out
    with _file_lock(Path(cache_dir) / ".build.lock"):
        if not (out / "base.json").is_file():
            build_packaged_base(name, out, seed=seed, work_dir=Path(cache_dir) / ".gguf")
    return out


def resolve_base(base_model: str, tiny: TinyModelParams, seed: int, cache_dir: Path) -> Path:
    """The one place that turns ``specialists.base_model`` into a base directory (trainer and evaluation);
    a base it builds is sized by ``tiny`` (``model.tiny``) and seeded by ``seed``.

    - ``builtin:tiny``: the builtin tiny base, built once into ``cache_dir``;
    - a packaged base name (:data:`worldagent.lm.pretrained.PACKAGED_BASES`: ``smollm2-135m``,
      ``gemma3-270m``): converted once from its PyPI package into ``cache_dir/<name>``;
    - a directory with ``base.json`` (the ``base`` stage's output, or any converted base): used as is;
    - the default ``models/world_agent/base`` while missing (a fresh clone): the builtin tiny base.

    Any other value is an error naming the fix.
    """
    from worldagent.lm.pretrained import PACKAGED_BASES

    if base_model == BUILTIN_TINY:
        return build_builtin_base(tiny, seed, cache_dir)
    if base_model in PACKAGED_BASES:
        return build_cached_packaged_base(base_model, seed, cache_dir)
    path = Path(base_model).expanduser()
    if (path / "base.json").is_file():
        return path
    if path.as_posix().endswith(DEFAULT_BASE):
        return build_builtin_base(tiny, seed, cache_dir)
    raise SpecialistBaseUnavailable(
        f"specialists.base_model {base_model!r} is not a base model directory (no base.json) nor a packaged base "
        f"({', '.join(sorted(PACKAGED_BASES))}); build the world-agent base with `dvc repro base`, "
        f"or set specialists.base_model to a packaged base, {DEFAULT_BASE!r} or {BUILTIN_TINY!r}"
    )


def base_cache_dir(specialists_data_dir: Path) -> Path:
    """Where bases are built for the specialists: ``<specialists data dir>/trainer/base-cache`` (the trainer's
    ``<data-dir>/specialists/trainer/base-cache`` when the trainer serves the project's ``data/``)."""
    return Path(specialists_data_dir) / "trainer" / BASE_CACHE


# --------------------------------------------------------------------------- training


def train_specialist(
    specialists: SpecialistsParams,
    seed: int,
    model: ModelParams,
    base_dir: Path,
    conversations: Sequence[Mapping[str, Any]],
    out_dir: Path,
    work_dir: Path,
) -> dict[str, Any]:
    """A short LoRA SFT (trl ``SFTTrainer`` via :func:`worldagent.lm.sft.train_sft`) with the specialists'
    own ``lora`` and ``sft`` sections on ``model``'s settings; the adapter is written atomically."""
    from worldagent.lm.sft import train_sft
    from worldagent.lm.training import LoraSetup

    work_dir.mkdir(parents=True, exist_ok=True)
    data = work_dir / "train.jsonl"
    data.write_text(jsonl(conversations), encoding="utf-8")
    started = time.perf_counter()
    setup = LoraSetup(seed=seed, model=model, lora=specialists.lora)
    metrics = train_sft(
        specialists.sft, setup, Path(base_dir), data, Path(out_dir), checkpoints=work_dir / "checkpoints"
    )
    metrics["total_s"] = round(time.perf_counter() - started, 3)
    return metrics


# --------------------------------------------------------------------------- evaluation


def adapter_base_dir(adapter_dir: Path) -> Path:
    from worldagent.lm.training import read_stage

    info = read_stage(Path(adapter_dir))
    return Path(info["base_dir"])


def _choice(text: str) -> tuple[str, str] | None:
    """(action, selectorOrRef) of an answer: its JSON object, or (cut answers) the opening alone."""
    action = parse_action(text)
    if action is not None:
        return action.action, action.selectorOrRef
    match = _OPENING.search(text)
    return (match.group(1), match.group(2)) if match else None


_OPENING = re.compile(r'"action":\s*"(\w+)",\s*"selectorOrRef":\s*"([^"]*)"')


def action_metrics(pairs: Sequence[tuple[Any, str]]) -> dict[str, Any]:
    """(expected output, generated text) → the held-out metrics of browser decisions.

    ``action_accuracy``: the right element *and* the right action (what the registration gate uses);
    ``action_type_accuracy``: the right action alone; ``exact_match``: action, element and value;
    ``parse_rate``: the answer is one well-formed action.
    """
    n = len(pairs)
    parsed = right_type = right = exact = 0
    for expected, text in pairs:
        want = as_browser_action(expected)
        got = parse_action(text)
        choice = _choice(text)
        parsed += got is not None
        if want is None or choice is None:
            continue
        if choice[0] == want.action:
            right_type += 1
            if choice[1] == want.selectorOrRef:
                right += 1
                if got is not None and (got.value or None) == (want.value or None):
                    exact += 1
    return {
        "n": n,
        "action_accuracy": right / n if n else None,
        "action_type_accuracy": right_type / n if n else None,
        "exact_match": exact / n if n else None,
        "parse_rate": parsed / n if n else None,
    }


def usable_rows(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Good browser-decision rows (what can be scored)."""
    return [
        r
        for r in rows
        if r.get("label") == "good"
        and as_browser_input(r.get("input")) is not None
        and as_browser_action(r.get("output")) is not None
    ]


def evaluate_loaded(
    model: Any,
    tokenizer: Any,
    rows: Sequence[Mapping[str, Any]],
    max_new_tokens: int = 48,
    *,
    constrained: bool = True,
    batch_size: int = 4,
    actions: Sequence[str] = ACTIONS,
    choice: str = "greedy",
) -> dict[str, Any]:
    """:func:`action_metrics` of greedy answers of a loaded model on the good browser rows of ``rows``."""
    from worldagent.lm.device import precision_label
    from worldagent.specialists.constrained import AnswerStats, generate_answers

    usable = usable_rows(rows)
    weight = next(model.parameters())  # where the model runs, in which precision
    stats = AnswerStats()
    started = time.perf_counter()
    answers = (
        generate_answers(
            model,
            tokenizer,
            [r["input"] for r in usable],
            max_new_tokens,
            constrained=constrained,
            batch_size=batch_size,
            stats=stats,
            actions=actions,
            choice=choice,
        )
        if usable
        else []
    )
    metrics = action_metrics([(r["output"], a) for r, a in zip(usable, answers, strict=True)])
    metrics.update(
        seconds=round(time.perf_counter() - started, 3),
        new_tokens=stats.new_tokens,
        prompt_tokens=stats.prompt_tokens,
        tokens_per_second=round(stats.tokens_per_second, 2),
        constrained=constrained,
        choice=choice,
        precision=precision_label(weight.dtype, weight.device.type),
    )
    metrics["examples"] = [
        {"expected": r["output"], "answer": a} for r, a in list(zip(usable, answers, strict=True))[:5]
    ]
    return metrics


def evaluate_model_dir(
    base_dir: Path,
    adapter_dir: Path | None,
    row_sets: Mapping[str, Sequence[Mapping[str, Any]]],
    max_new_tokens: int = 48,
    *,
    constrained: bool = True,
    batch_size: int = 4,
    actions: Sequence[str] = ACTIONS,
    choice: str = "greedy",
    device: str | None = None,
) -> dict[str, dict[str, Any]]:
    """Load base (+ adapter) once, on ``device`` (default :func:`~worldagent.lm.device.select_device`'s,
    in its ``auto`` precision), and evaluate it on each named row set."""
    from worldagent.lm.load import load_policy

    model, tokenizer = load_policy(Path(base_dir), Path(adapter_dir) if adapter_dir else None, device=device)
    return {
        name: evaluate_loaded(
            model,
            tokenizer,
            rows,
            max_new_tokens,
            constrained=constrained,
            batch_size=batch_size,
            actions=actions,
            choice=choice,
        )
        for name, rows in row_sets.items()
    }


def base_eval_key(base_dir: Path, rows: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]) -> str:
    """What a base's own score depends on: its files' identity, the rows and the decoding settings."""
    from worldagent.lm.training import file_hash

    base_dir = Path(base_dir)
    parts = {
        name: file_hash(base_dir / name)
        for name in ("base.json", "config.json", "model.safetensors", "tokenizer.json")
        if (base_dir / name).is_file()
    }
    payload = canonical_json({"base": parts, "rows": [dict(r) for r in rows], "settings": dict(settings)})
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def base_accuracy(
    base_dir: Path,
    rows: Sequence[Mapping[str, Any]],
    cache_dir: Path,
    max_new_tokens: int = 48,
    *,
    constrained: bool = True,
    batch_size: int = 4,
    choice: str = "greedy",
) -> dict[str, Any]:
    """The untrained base's own metrics on ``rows`` (what a specialist must beat), cached in ``cache_dir``."""
    from worldagent.io import atomic_write_text, pretty_json, read_json
    from worldagent.lm.device import precision_label, resolve_dtype, select_device

    device = select_device()
    # a score measured in another precision is another measurement
    precision = precision_label(resolve_dtype("auto", device), device)
    settings = {"max_new_tokens": max_new_tokens, "constrained": constrained, "choice": choice, "precision": precision}
    path = Path(cache_dir) / "base-evals" / f"{base_eval_key(base_dir, rows, settings)}.json"
    if path.is_file():
        try:
            return dict(read_json(path, "a cached base evaluation", expect=dict))
        except (OSError, ValueError):  # InputError is a ValueError
            pass  # a damaged cache entry is measured again
    metrics = evaluate_model_dir(
        base_dir,
        None,
        {"rows": rows},
        max_new_tokens,
        constrained=constrained,
        batch_size=batch_size,
        choice=choice,
        device=device,
    )["rows"]
    atomic_write_text(path, pretty_json(metrics))
    return metrics


def evaluate_adapter(
    adapter_dir: Path,
    rows: Sequence[Mapping[str, Any]],
    max_new_tokens: int = 48,
    base_dir: Path | None = None,
    constrained: bool = True,
) -> dict[str, Any]:
    """Metrics of the adapter (on ``base_dir``, default the base it records) on good browser-decision rows."""
    base = Path(base_dir) if base_dir else adapter_base_dir(Path(adapter_dir))
    return evaluate_model_dir(base, Path(adapter_dir), {"rows": rows}, max_new_tokens, constrained=constrained)["rows"]
