"""The ``specialists`` section: browser specialists (issue 5), their feedback store, trainer service
and registration gate.
"""

from __future__ import annotations

from pydantic import Field

from worldagent.config.base import Section
from worldagent.config.model import LoraParams
from worldagent.config.training import SftParams


class SpecialistsTrainerParams(Section):
    """The local trainer service (``worldagent trainer serve``) and how the platform reaches it."""

    url: str = "http://127.0.0.1:8765"  # where trigger_training posts; LOCAL_TRAINER_URL overrides
    host: str = "127.0.0.1"
    port: int = Field(default=8765, gt=0, lt=65536)
    db_url: str | None = None  # run state; default sqlite:///<first data dir>/specialists/trainer.db
    max_concurrent: int = Field(default=1, gt=0)  # more runs than this wait as pending
    token: str | None = None  # optional bearer token (WORLDAGENT_TRAINER_TOKEN overrides)
    request_timeout_s: float = Field(default=5.0, gt=0)
    worker_threads: int | None = Field(
        default=1, gt=0
    )  # torch threads per worker (null: torch's default); 1 is fastest on a shared CPU


class BrowserSetParams(Section):
    """The embedded browser-decision set (worldagent/specialists/browser_set.py): its seed and split sizes."""

    seed: int = 7
    train: int = Field(default=160, ge=0)  # decisions mixed into every specialist's training data (0: none)
    heldout: int = Field(default=60, gt=0)  # the held-out decisions evaluate_model scores


class SpecialistsParams(Section):
    """Browser specialists: feedback store, training-data strategies, trainer, registry (DESIGN §5)."""

    store_url: str = "sqlite:///data/specialists/feedback.db"  # any SQLAlchemy URL
    data_dir: str = "data/specialists"  # datasets written by generate_training_data
    base_model: str = "models/world_agent/base"  # missing default → a builtin tiny base is built and cached
    max_rows: int = Field(default=1000, gt=0)  # from_feedback row limit (newest first)
    eval_fraction: float = Field(default=0.2, ge=0, lt=1)  # feedback rows held out for evaluate_model
    min_new_feedback: int = Field(default=20, gt=0)  # the flow trains an agent once it has this many new rows
    # registration gate: held-out action accuracy (right element and action) on the embedded set
    min_action_accuracy: float = Field(default=0.8, ge=0, le=1)
    above_base: bool = True  # the gate also requires beating the untrained base's own accuracy
    eval_max_new_tokens: int = Field(default=48, gt=0)
    eval_batch_size: int = Field(default=4, gt=0)  # prompts per generate call (KV cache, left padding)
    constrained: bool = True  # answers name a known action and one of the page's refs (decoding constraint)
    browser_set: BrowserSetParams = BrowserSetParams()
    family_prefix: str = "specialist"  # registry family: <prefix>-<agentId>
    lora: LoraParams = LoraParams(r=8, alpha=16, dropout=0.0)
    sft: SftParams = SftParams(
        max_steps=6, batch_size=4, max_length=384, learning_rate=5e-3, logging_steps=1, save_steps=1000
    )
    trainer: SpecialistsTrainerParams = SpecialistsTrainerParams()
