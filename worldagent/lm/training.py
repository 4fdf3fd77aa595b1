"""What the sft, dpo and grpo stages share: LoRA and trainer settings, checkpoints, atomic outputs.

Layout (relative to the project root):

- ``models/world_agent/<stage>/``: the stage's adapter, a DVC out. It is written into a sibling
  temporary directory, ``stage.json`` last, then renamed over the out: a reader sees a complete
  adapter (``stage.json`` present) or none, never half of one.
- ``models/world_agent/checkpoints/<stage>/``: the trainer's checkpoints, outside the DVC out so
  that DVC does not delete them when it clears the out before a run. A rerun after an interruption
  resumes from the last complete checkpoint there; the checkpoints are deleted after success. A
  ``fingerprint.json`` ties them to the inputs (params, data, base, parents): checkpoints of
  different inputs are discarded instead of resumed.
- ``reports/world_agent/training/<stage>.json``: the training curve (``trainer.state.log_history``
  as rows ``{step, loss, ...}``), a DVC plots file.

Each adapter directory is self-contained on top of the base: the adapters it was trained on top of
(sft under dpo; sft and dpo under grpo) are copied into ``parents/<n>-<stage>/`` and listed in
``stage.json["chain"]`` in merge order, so ``load_policy(base, adapter)`` needs nothing else.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import re
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from worldagent.allocator import return_freed_memory, trim_freed_memory
from worldagent.config import FreedMemory, LoraParams, ModelParams, TrainerParams
from worldagent.errors import InputError
from worldagent.guard import files
from worldagent.io import (
    atomic_directory,
    atomic_write_text,
    canonical_json,
    directory_hash,
    pretty_json,
    read_json,
    sha256_file,
    without_run_dependent,
)
from worldagent.io import read_jsonl as read_jsonl_file

log = logging.getLogger(__name__)

STAGES = ("sft", "experience", "dpo", "grpo")
STAGE_FILE = "stage.json"
ADAPTER_CONFIG = "adapter_config.json"  # peft's
FINGERPRINT_FILE = "fingerprint.json"
PARENTS_DIR = "parents"
CHECKPOINTS_DIR = "checkpoints"
CURVES_DIR = Path("reports/world_agent/training")
_CHECKPOINT_RE = re.compile(r"^checkpoint-(\d+)$")
# Above this many parameters the trainers recompute activations instead of storing them, on an
# accelerator only: its memory is what runs out. On a CPU the host memory holds a 135M model's
# activations many times over, and recomputing them cost SmolLM2 ~1.4x per step (docs/profiles.md).
GRADIENT_CHECKPOINTING_MIN_PARAMS = 100_000_000


class TrainingError(InputError):
    """Invalid input to a training stage; the message names the file or key."""


# ---------------------------------------------------------------------------------------------
# LoRA and trainer arguments
# ---------------------------------------------------------------------------------------------


def lora_config(params: LoraParams, model: Any = None) -> Any:
    """``lora.*`` → ``peft.LoraConfig`` for a causal LM (``model`` gives the layer count ``lora.top_layers`` needs)."""
    from peft import LoraConfig, TaskType

    layers = None
    if params.top_layers is not None:
        total = int(getattr(getattr(model, "config", None), "num_hidden_layers", 0) or 0)
        if total <= 0:
            raise TrainingError("lora.top_layers needs a model whose config has num_hidden_layers")
        layers = list(range(max(0, total - params.top_layers), total))
    return LoraConfig(
        task_type=TaskType.CAUSAL_LM,
        r=params.r,
        lora_alpha=params.alpha,
        lora_dropout=params.dropout,
        target_modules=list(params.target_modules),
        layers_to_transform=layers,
        bias="none",
    )


def trainer_kwargs(
    params: TrainerParams,
    *,
    output_dir: Path,
    seed: int,
    device: str,
    dtype: Any,
    model: Any,
) -> dict[str, Any]:
    """Keyword arguments shared by SFTConfig, DPOConfig and GRPOConfig (TrainingArguments subclasses).

    Every knob of the stage's params section maps here; the stage adds its own (max_length, beta,
    num_generations, ...). Precision comes from the device (bf16 on CUDA that supports it, fp32 on
    CPU); activation checkpointing from the section's setting, the device and ``model``'s size; no
    logging integration is enabled (``report_to=[]``); the console shows tqdm progress.
    """
    from worldagent.lm.base import parameter_count
    from worldagent.lm.device import trainer_precision

    kwargs: dict[str, Any] = {
        "output_dir": str(output_dir),
        "num_train_epochs": params.epochs,
        "max_steps": params.max_steps,
        "learning_rate": params.learning_rate,
        "per_device_train_batch_size": params.batch_size,
        "gradient_accumulation_steps": params.gradient_accumulation_steps,
        "warmup_steps": params.warmup_ratio,  # transformers 5: a float in [0, 1) is a ratio of the total steps
        "logging_strategy": "steps",
        "logging_steps": params.logging_steps,
        "logging_first_step": True,
        "save_strategy": "steps",
        "save_steps": params.save_steps,
        "save_total_limit": 2,  # the last one may be incomplete if the process dies while writing it
        "seed": seed,
        "data_seed": seed,
        "report_to": [],
        "disable_tqdm": False,
        # trl defaults to on; only worth it for big models, or where memory is what runs out.
        "activation_checkpointing": wants_activation_checkpointing(
            params.activation_checkpointing, device, parameter_count(model)
        ),
        "dataloader_num_workers": 0,
        "use_cpu": device == "cpu",
    }
    kwargs.update(trainer_precision(device, dtype))
    return kwargs


def freed_memory_callbacks(setting: FreedMemory) -> list[Any]:
    """Apply a training section's ``freed_memory`` (:mod:`worldagent.allocator`); call it before the
    model loads. Returns the trainer callbacks the setting needs: ``trim`` after every micro-batch."""
    if setting == "unmap":
        return_freed_memory()
    if setting != "trim":
        return []
    from transformers import TrainerCallback

    class TrimFreedMemory(TrainerCallback):
        # on_substep_end follows each micro-batch but the last of an optimizer step, on_step_end that one
        def on_substep_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            trim_freed_memory()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            trim_freed_memory()

    return [TrimFreedMemory()]


def wants_activation_checkpointing(setting: Literal["auto"] | bool, device: str, model_parameters: int) -> bool:
    """A stage's ``activation_checkpointing`` setting resolved for a model of ``model_parameters`` on ``device``."""
    if setting != "auto":
        return setting
    return device != "cpu" and model_parameters >= GRADIENT_CHECKPOINTING_MIN_PARAMS


# ---------------------------------------------------------------------------------------------
# Checkpoints
# ---------------------------------------------------------------------------------------------


def checkpoint_root(out_dir: Path, stage: str) -> Path:
    """``models/world_agent/<stage>`` → ``models/world_agent/checkpoints/<stage>``."""
    return out_dir.parent / CHECKPOINTS_DIR / stage


def _is_complete_checkpoint(path: Path) -> bool:
    # The Trainer writes trainer_state.json after the weights, optimizer and RNG state.
    return (path / "trainer_state.json").is_file()


def last_checkpoint(directory: Path) -> Path | None:
    """The highest-numbered complete ``checkpoint-N`` under ``directory`` (None if there is none)."""
    if not directory.is_dir():
        return None
    found = []
    for child in directory.iterdir():
        match = _CHECKPOINT_RE.match(child.name)
        if match and child.is_dir() and _is_complete_checkpoint(child):
            found.append((int(match.group(1)), child))
    return max(found)[1] if found else None


@contextlib.contextmanager
def _one_process_at_a_time(directory: Path) -> Iterator[None]:
    """Hold a lock beside ``directory`` for the block.

    Every rank of a data-parallel launch prepares the same checkpoint directory, and it does so
    before the trainer's arguments create the process group, so a barrier cannot order them: a
    lock file does, in one process or many. It lives beside the directory because the block may
    delete the directory.
    """
    from filelock import FileLock

    directory.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(directory.with_name(f".{directory.name}.lock")):
        yield


def prepare_checkpoints(directory: Path, fingerprint: Mapping[str, Any]) -> Path | None:
    """Make ``directory`` ready for a run with these inputs; return the checkpoint to resume from.

    Checkpoints written for other inputs (another fingerprint) are deleted, and so are incomplete
    checkpoints (a process killed while saving), so the Trainer never resumes from either.
    """
    wanted = canonical_json(dict(fingerprint))
    recorded_file = directory / FINGERPRINT_FILE
    # every rank of a data-parallel launch calls this: the first prepares, the others find it prepared
    with _one_process_at_a_time(directory):
        recorded = files.read_text(recorded_file, what="a checkpoint fingerprint") if recorded_file.is_file() else None
        if directory.exists() and recorded != wanted:
            if any(directory.iterdir()):
                log.info("discarding checkpoints in %s: they were written for other inputs", directory)
            shutil.rmtree(directory)
        directory.mkdir(parents=True, exist_ok=True)
        if recorded != wanted:
            atomic_write_text(recorded_file, wanted)
        for child in directory.iterdir():
            if _CHECKPOINT_RE.match(child.name) and child.is_dir() and not _is_complete_checkpoint(child):
                log.info("removing incomplete checkpoint %s", child)
                shutil.rmtree(child)
    resume = last_checkpoint(directory)
    if resume is not None:
        log.info("resuming from %s", resume)
    return resume


# ---------------------------------------------------------------------------------------------
# Fingerprints and provenance
# ---------------------------------------------------------------------------------------------


def file_hash(path: Path) -> str:
    return sha256_file(path)


def tree_hash(directory: Path) -> str:
    """The content hash of every file under ``directory`` (:func:`worldagent.io.directory_hash`, nothing ignored)."""
    return directory_hash(directory, ignore=()) or hashlib.sha256(b"").hexdigest()


@dataclass(frozen=True)
class LoraSetup:
    """What every training stage shares: the seed, the base model's section and the LoRA settings."""

    seed: int
    model: ModelParams
    lora: LoraParams


def stage_params(setup: LoraSetup, stage: str, section: TrainerParams) -> dict[str, Any]:
    """The params a stage's result depends on (recorded in stage.json and the fingerprint)."""
    return {
        "seed": setup.seed,
        "model": {"base": setup.model.base, "dtype": setup.model.dtype},
        "lora": setup.lora.model_dump(),
        stage: section.model_dump(),
    }


def read_stage(adapter_dir: Path) -> dict[str, Any]:
    """The adapter's ``stage.json``; an adapter without one is incomplete and rejected."""
    path = adapter_dir / STAGE_FILE
    if not path.is_file():
        raise TrainingError(f"{adapter_dir}: not a complete adapter (no {STAGE_FILE}); rerun its stage")
    return read_json(path, "the adapter's stage record", expect=dict, error=TrainingError)


def write_stage(adapter_dir: Path, info: Mapping[str, Any]) -> None:
    """Write the adapter's ``stage.json`` (last, atomically), without clock times, speeds or memory
    (those go to the stage's metrics file): the same training writes the same bytes, so an unchanged
    adapter is an unchanged DVC out and its evaluation is not run again."""
    atomic_write_text(adapter_dir / STAGE_FILE, pretty_json(without_run_dependent(dict(info))))


def merge_adapters(model: Any, adapters: list[Path]) -> Any:
    """Merge each LoRA adapter into ``model`` in order (sft, then dpo on the merged sft model, ...)."""
    from peft import PeftModel

    for adapter in adapters:
        model = PeftModel.from_pretrained(model, str(adapter), is_trainable=False).merge_and_unload()
    return model


def adapter_chain(adapter_dir: Path) -> list[Path]:
    """The adapter directories to merge onto the base, in order, ending with ``adapter_dir`` itself."""
    info = read_stage(adapter_dir)
    chain = [adapter_dir / entry["path"] for entry in info.get("chain", [])]
    return [*chain, adapter_dir]


# ---------------------------------------------------------------------------------------------
# Atomic outputs
# ---------------------------------------------------------------------------------------------


def save_adapter(
    model: Any,
    tokenizer: Any,
    out_dir: Path,
    *,
    stage: str,
    base_dir: Path,
    parents: Sequence[Path],
    params: Mapping[str, Any],
    metrics: Mapping[str, Any],
    data_hash: str,
) -> None:
    """Write the trained adapter to ``out_dir`` atomically, ``stage.json`` last (:func:`write_stage`).

    ``parents`` are the complete adapter directories this one was trained on top of, in merge
    order; each is copied into ``parents/<n>-<stage>/`` so that the out is self-contained.
    """
    with atomic_directory(out_dir) as tmp:
        model.save_pretrained(str(tmp))
        sort_target_modules(tmp / ADAPTER_CONFIG)
        if tokenizer is not None:
            tokenizer.save_pretrained(str(tmp))
        chain: list[dict[str, Any]] = []
        for index, parent in enumerate(parents):
            parent_info = read_stage(parent)
            relative = Path(PARENTS_DIR) / f"{index}-{parent_info['stage']}"
            target = tmp / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            _copy_adapter_files(parent, target)
            chain.append(
                {
                    "stage": parent_info["stage"],
                    "path": relative.as_posix(),
                    "source": str(parent),
                    "data_hash": parent_info.get("data_hash"),
                }
            )
        info = {
            "stage": stage,
            "base_dir": str(base_dir),
            "base_config_sha256": file_hash(base_dir / "config.json") if (base_dir / "config.json").is_file() else None,
            "chain": chain,
            "params": dict(params),
            "metrics": dict(metrics),
            "data_hash": data_hash,
        }
        adapter_hash = tree_hash(tmp)
        info["adapter_sha256"] = adapter_hash
        write_stage(tmp, info)


def sort_target_modules(config_path: Path) -> None:
    """peft keeps ``target_modules`` as a set and writes it in hash order, which changes from run to
    run: sorted, the same training writes the same bytes (and DVC sees the same adapter)."""
    if not config_path.is_file():
        return
    config = read_json(config_path)
    if isinstance(config.get("target_modules"), list):
        config["target_modules"] = sorted(config["target_modules"])
        # peft's own layout (indent 2, sorted keys), so only the order changes
        atomic_write_text(config_path, json.dumps(config, indent=2, sort_keys=True))


def _copy_adapter_files(source: Path, target: Path) -> None:
    """Copy one adapter (weights, config, stage.json), leaving out its own parents and tokenizer."""
    target.mkdir(parents=True, exist_ok=True)
    for path in source.iterdir():
        if path.is_file() and (path.name.startswith("adapter_") or path.name == STAGE_FILE):
            shutil.copyfile(path, target / path.name)


def curve_rows(log_history: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``trainer.state.log_history`` → plot rows ``{step, epoch, loss, ...}`` (the final summary row dropped)."""
    rows = []
    for entry in log_history:
        if "train_runtime" in entry:  # the summary the Trainer logs at the end, not a point of the curve
            continue
        row: dict[str, Any] = {"step": int(entry.get("step", 0))}
        for key, value in entry.items():
            if key == "step" or not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            if isinstance(value, float) and not math.isfinite(value):
                continue
            row[key] = value
        rows.append(row)
    return rows


def live_curves(live: Any) -> Any:
    """A trainer callback: each row the trainer logs becomes one DVCLive step of ``live``."""
    from transformers import TrainerCallback

    from worldagent.live import loggable

    class LiveCurves(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Mapping[str, Any] | None = None, **kwargs: Any):
            values = loggable(logs or {})
            if not state.is_world_process_zero or not values:
                return
            live.step = int(state.global_step)
            for key, value in values.items():
                live.log_metric(key, value)
            live.next_step()

    return LiveCurves()


def summary_metrics(log_history: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    """First and last logged value of each key (``loss`` → ``loss_first``, ``loss_last``), and the run summary."""
    metrics: dict[str, Any] = {}
    rows = curve_rows(log_history)
    for key in keys:
        values = [row[key] for row in rows if key in row]
        if values:
            metrics[f"{key.replace('/', '_')}_first"] = values[0]
            metrics[f"{key.replace('/', '_')}_last"] = values[-1]
    for entry in log_history:
        if "train_runtime" in entry:
            metrics["train_runtime_s"] = entry["train_runtime"]
            metrics["train_samples_per_second"] = entry.get("train_samples_per_second")
            metrics["train_loss"] = entry.get("train_loss")
    if rows:
        metrics["global_step"] = rows[-1]["step"]
    return metrics


def train_tokens_per_second(log_history: Sequence[Mapping[str, Any]], wall_s: float) -> float | None:
    """Tokens the trainer saw (trl's SFT, DPO and GRPO trainers log ``num_tokens``, cumulative) per second."""
    seen = [float(row["num_tokens"]) for row in log_history if isinstance(row.get("num_tokens"), (int, float))]
    return round(max(seen) / wall_s, 2) if seen and wall_s > 0 else None


def finish_checkpoints(directory: Path) -> None:
    """After the adapter is written: the checkpoints are no longer needed."""
    shutil.rmtree(directory, ignore_errors=True)
    with contextlib.suppress(OSError):
        directory.parent.rmdir()  # the shared checkpoints/ folder, once no stage has any left


def run_trainer(
    trainer: Any,
    *,
    stage: str,
    out_dir: Path,
    checkpoints: Path,
    resume: Path | None,
    base_dir: Path,
    parents: Sequence[Path],
    params: Mapping[str, Any],
    data_hash: str,
    tokenizer: Any,
    live_dir: Path | None,
    metric_keys: Sequence[str],
) -> dict[str, Any]:
    """Train (resuming when a checkpoint is given; the curves go to DVCLive in ``live_dir`` as they
    are logged), then write the adapter and clean up."""
    dataset = getattr(trainer, "train_dataset", None)
    if dataset is not None and len(dataset) == 0:
        # trl drops rows whose trainable tokens were all cut off: say which knob to turn.
        raise TrainingError(
            f"{stage}: no training example has a trainable token left within {stage}.max_length="
            f"{params.get(stage, {}).get('max_length')} (prompts are long: raise {stage}.max_length in params.yaml)"
        )
    live = None
    if live_dir is not None and trainer.is_world_process_zero():
        from worldagent.live import open_live

        live = open_live(live_dir, resume=resume is not None)
        trainer.add_callback(live_curves(live))
    started = time.perf_counter()
    try:
        output = trainer.train(resume_from_checkpoint=str(resume) if resume is not None else None)
    finally:
        if live is not None:
            live.end()
    wall = time.perf_counter() - started
    history = list(trainer.state.log_history)
    metrics = summary_metrics(history, metric_keys)
    metrics["global_step"] = int(trainer.state.global_step)
    metrics["resumed_from_step"] = int(resume.name.split("-")[-1]) if resume is not None else 0
    metrics["wall_s"] = round(wall, 3)
    metrics["train_tokens_per_second"] = train_tokens_per_second(history, wall)
    # model.dtype can resolve per machine (prefer-bfloat16): the figures say which precision made them.
    from worldagent.lm.device import precision_label

    weights = next(trainer.model.parameters())
    metrics["precision"] = precision_label(weights.dtype, weights.device.type)
    metrics["train_loss"] = float(output.training_loss) if output.training_loss is not None else None
    if not trainer.is_world_process_zero():
        return metrics  # data-parallel launch (accelerate, torchrun): one process writes the outputs
    save_adapter(
        trainer.model,
        tokenizer,
        out_dir,
        stage=stage,
        base_dir=base_dir,
        parents=parents,
        params=params,
        metrics=metrics,
        data_hash=data_hash,
    )
    finish_checkpoints(checkpoints)
    return metrics


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSONL dataset; a missing file, bad line or empty file is a TrainingError."""
    rows = read_jsonl_file(path, "dataset", hint="run the generate stage first", error=TrainingError)
    if not rows:
        raise TrainingError(f"{path}: the dataset is empty")
    return rows


def require_complete_adapter(adapter_dir: Path, stage: str | tuple[str, ...]) -> str:
    """The adapter's stage; a TrainingError unless it is complete and one of ``stage``."""
    info = read_stage(adapter_dir)
    allowed = (stage,) if isinstance(stage, str) else tuple(stage)
    if info.get("stage") not in allowed:
        raise TrainingError(f"{adapter_dir}: expected a {' or '.join(allowed)} adapter, found {info.get('stage')!r}")
    return str(info["stage"])


def score_labelled_positions_only() -> bool:
    """Make trl's fused LM head score only the labelled positions on a CPU too; True once it does.

    trl 1.16 scores only the positions that carry a label on Triton devices, and every position
    elsewhere (then zeroes the unlabelled ones), so that an ahead-of-time compiler sees one tile shape
    per batch. On a CPU, eager kernels do not recompile, and the unlabelled positions are the prompt:
    about 72% of an SFT row here (the retrieved stories and component files), each projected through
    the 49,152-token head forward and backward for nothing. Scoring the labelled ones alone gives the
    same loss and one SFT row takes 2.7 s instead of 4.7 (docs/profiles.md, "Where a step's time goes").
    The switch is trl's module-level ``_use_triton`` as ``_fused_forward`` reads it (its kernels read
    their own copy, so they still take the torch path on a CPU); a trl without it is logged and left
    as it is, and a test fails, so an upgrade that moves it is noticed.
    """
    from trl.trainer import utils as trl_utils

    uses_triton = getattr(trl_utils, "_use_triton", None)
    if uses_triton is None:
        log.warning("trl.trainer.utils has no _use_triton: trl scores every position on a CPU")
        return False
    if getattr(uses_triton, "scores_labelled_positions_on_cpu", False):
        return True

    def compact_scoring(device: Any) -> bool:
        return device.type == "cpu" or uses_triton(device)

    compact_scoring.scores_labelled_positions_on_cpu = True  # type: ignore[attr-defined]
    trl_utils._use_triton = compact_scoring
    return True


def load_training_model(
    setup: LoraSetup, base_dir: Path, parent: Path | None, device: str | None
) -> tuple[Any, Any, str, Any, list[Path]]:
    """(model, tokenizer, device, dtype, parents): the base with ``parent``'s chain merged, ready to train
    (trl's loss set to score the labelled positions only, :func:`score_labelled_positions_only`)."""
    from worldagent.lm.base import load_base
    from worldagent.lm.device import configure_threads, resolve_dtype, seed_everything, select_device

    device = device or select_device()
    configure_threads(device)
    score_labelled_positions_only()
    dtype = resolve_dtype(setup.model.dtype, device)
    seed_everything(setup.seed)
    parents = adapter_chain(parent) if parent is not None else []
    model, tokenizer = load_base(base_dir, device=device, dtype=dtype)
    model = merge_adapters(model, parents)
    model.train()
    return model, tokenizer, device, dtype, parents


def fingerprint(
    stage: str, record: Mapping[str, Any], data_hash: str, base_dir: Path, parents: Sequence[Path]
) -> dict[str, Any]:
    """What the checkpoints of a run depend on: the stage's params (``record``, :func:`stage_params`),
    the data, the base and the parents' files."""
    return {
        "stage": stage,
        "params": dict(record),
        "data": data_hash,
        "base": tree_hash(base_dir),
        "parents": [tree_hash(p) if p.is_dir() else str(p) for p in parents],
    }


# ---------------------------------------------------------------------------------------------
# One training stage: load, checkpoints, trainer, run, adapter
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedModel:
    """The model a stage trains (:func:`load_model`) and what its trainer needs besides."""

    model: Any
    tokenizer: Any
    device: str
    dtype: Any
    parents: list[Path]
    memory_callbacks: list[Any]


def load_model(
    section: TrainerParams, setup: LoraSetup, base_dir: Path, parent: Path | None, device: str | None
) -> LoadedModel:
    """``section.freed_memory`` applied (before the model loads: the allocator setting must come first),
    then the base with ``parent``'s chain merged (:func:`load_training_model`)."""
    memory_callbacks = freed_memory_callbacks(section.freed_memory)
    model, tokenizer, device, dtype, parents = load_training_model(setup, base_dir, parent, device)
    return LoadedModel(model, tokenizer, device, dtype, list(parents), memory_callbacks)


@dataclass(frozen=True)
class TrainerSpec:
    """What differs between the stages' trl trainers.

    ``trainer_class``: SFTTrainer, DPOTrainer, GRPOTrainer (or a subclass); ``config``: the trainer's
    typed config (SFTConfig, ...) from the keyword arguments every stage shares (:func:`trainer_kwargs`)
    and the loaded model; ``rows``: the training dataset; ``extra``: more trainer arguments
    (``ref_model``, ``reward_funcs``); ``metric_keys``: the logged values summarised in the metrics.
    """

    trainer_class: Any
    config: Callable[[dict[str, Any], LoadedModel], Any]
    rows: Sequence[Mapping[str, Any]]
    metric_keys: Sequence[str]
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StageRun:
    """One stage's run: what it is (``stage``, its ``section``, the shared ``setup``), where it reads and
    writes, and what its record holds besides :func:`stage_params` (``record_extra``, e.g. the reward
    weights) and its checkpoints' fingerprint besides (``fingerprint_extra``)."""

    stage: str
    section: TrainerParams
    setup: LoraSetup
    base_dir: Path
    out_dir: Path
    data_hash: str
    checkpoints: Path | None = None
    live_dir: Path | None = None
    callbacks: Sequence[Any] = ()
    record_extra: Mapping[str, Any] = field(default_factory=dict)
    fingerprint_extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def checkpoint_dir(self) -> Path:
        return self.checkpoints or checkpoint_root(self.out_dir, self.stage)

    def record(self) -> dict[str, Any]:
        """The params recorded in the adapter's stage.json."""
        return {**stage_params(self.setup, self.stage, self.section), **self.record_extra}


def build_trainer(run: StageRun, loaded: LoadedModel, spec: TrainerSpec) -> Any:
    """The stage's trl trainer: its typed config straight in, a fresh LoRA adapter on ``loaded.model``."""
    from datasets import Dataset

    common = trainer_kwargs(
        run.section,
        output_dir=run.checkpoint_dir,
        seed=run.setup.seed,
        device=loaded.device,
        dtype=loaded.dtype,
        model=loaded.model,
    )
    return spec.trainer_class(
        model=loaded.model,
        args=spec.config(common, loaded),
        train_dataset=Dataset.from_list(list(spec.rows)),
        processing_class=loaded.tokenizer,
        peft_config=lora_config(run.setup.lora, loaded.model),
        callbacks=[*run.callbacks, *loaded.memory_callbacks],
        **spec.extra,
    )


def train_loaded(run: StageRun, loaded: LoadedModel, spec: TrainerSpec) -> tuple[dict[str, Any], Any]:
    """Prepare the checkpoints (resuming from one of the same inputs), build the trainer, train, write
    the adapter: (the metrics, the trainer)."""
    checkpoints = run.checkpoint_dir
    stage_fingerprint = {
        **fingerprint(
            run.stage, stage_params(run.setup, run.stage, run.section), run.data_hash, run.base_dir, loaded.parents
        ),
        **run.fingerprint_extra,
    }
    resume = prepare_checkpoints(checkpoints, stage_fingerprint)
    trainer = build_trainer(run, loaded, spec)
    metrics = run_trainer(
        trainer,
        stage=run.stage,
        out_dir=run.out_dir,
        checkpoints=checkpoints,
        resume=resume,
        base_dir=run.base_dir,
        parents=loaded.parents,
        params=run.record(),
        data_hash=run.data_hash,
        tokenizer=loaded.tokenizer,
        live_dir=run.live_dir,
        metric_keys=spec.metric_keys,
    )
    return metrics, trainer


def train_stage(
    run: StageRun, parent: Path | None, spec: Callable[[LoadedModel], TrainerSpec], device: str | None = None
) -> dict[str, Any]:
    """The whole stage: load the base (+ ``parent``'s chain), then :func:`train_loaded` with the trainer
    ``spec`` builds for the loaded model; returns the metrics."""
    loaded = load_model(run.section, run.setup, run.base_dir, parent, device)
    metrics, _ = train_loaded(run, loaded, spec(loaded))
    return metrics


# ---------------------------------------------------------------------------------------------
# A stage that does not train
# ---------------------------------------------------------------------------------------------


def is_off(section: TrainerParams) -> bool:
    """``max_steps: 0`` turns a post-SFT stage (experience, dpo, grpo) off."""
    return section.max_steps == 0


def off_reason(stage: str) -> str:
    return f"{stage}.max_steps is 0: the stage is off in this profile"


def pass_through(stage: str, parent_dir: Path, out_dir: Path, record: Mapping[str, Any]) -> None:
    """Write ``parent_dir`` to ``out_dir`` unchanged (a stage that did not train), its record saying why:
    the adapter files are the parent's, ``stage.json`` is the parent's with ``stage`` set to ``stage``,
    ``passthrough_of`` to the stage that trained these weights (the parent, or the stage the parent
    itself wrote through, so a chain of stages that are off names the trainer), and ``record``'s keys added."""
    info = read_stage(parent_dir)
    with atomic_directory(out_dir) as tmp:
        shutil.copytree(parent_dir, tmp, dirs_exist_ok=True, symlinks=False)
        write_stage(
            tmp, {**info, "stage": stage, "passthrough_of": info.get("passthrough_of") or info.get("stage"), **record}
        )


def skip_stage(
    stage: str, parent_dir: Path, out_dir: Path, live_dir: Path | None, reason: str, **metrics: Any
) -> dict[str, Any]:
    """The input adapter written through (:func:`pass_through`) with ``{"skipped": true, "reason": ...}``
    in its record; returns the metrics (``skipped``, ``reason``, ``global_step`` 0 and ``metrics``).
    The declared curves exist either way: one step saying it did not train."""
    result = {"skipped": True, "reason": reason, **metrics, "global_step": 0}
    pass_through(stage, parent_dir, out_dir, {"skipped": True, "reason": reason, "metrics": result})
    if live_dir is not None:
        from worldagent.live import write_curve

        write_curve(Path(live_dir), [{"step": 0, "trained": 0}], "step")
    log.warning("%s: skipped: %s", stage, reason)
    return result
