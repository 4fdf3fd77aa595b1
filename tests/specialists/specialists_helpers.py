"""Specialists test helpers: tiny params, live servers on loopback, browser-decision rows."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import yaml

from worldagent.config import ModelParams, Params, TinyModelParams

PROJECT = Path(__file__).resolve().parents[2]
TINY = TinyModelParams(
    vocab_size=1024,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=2,
    num_key_value_heads=1,
    head_dim=32,
)


def tiny_params(base_model: str = "models/world_agent/base", **specialists: Any) -> Params:
    spec = Params().specialists.model_copy(update={"base_model": base_model, **specialists})
    return Params(seed=5, model=ModelParams(tiny=TINY), specialists=spec)


def service_settings(**specialists: Any) -> dict[str, Any]:
    """SpecialistsService's settings from :func:`tiny_params`: its ``specialists``, ``model.tiny`` and ``seed``."""
    params = tiny_params(**specialists)
    return {"specialists": params.specialists, "tiny": params.model.tiny, "seed": params.seed}


def tiny_base_settings() -> tuple[TinyModelParams, int]:
    """What the base resolver reads of :func:`tiny_params`: ``model.tiny`` and ``seed``."""
    params = tiny_params()
    return params.model.tiny, params.seed


def write_params(path: Path, base_dir: Path, store: Path, registry: Path, trainer_url: str, **specialists: Any) -> Path:
    raw = {
        "seed": 5,
        "model": {"tiny": TINY.model_dump()},
        "registry": {"url": f"sqlite:///{registry}"},
        "specialists": {
            "store_url": f"sqlite:///{store}",
            "data_dir": str(path.parent / "data" / "specialists"),
            "base_model": str(base_dir),
            "eval_fraction": 0.0,
            "trainer": {"url": trainer_url},
            # The tiny random-init base learns no reading in a 6-step run: the tests gate on nothing but
            # keep the embedded set small (its held-out rows are still generated and scored).
            "min_action_accuracy": 0.0,
            "above_base": False,
            "browser_set": {"train": 8, "heldout": 6},
            **specialists,
        },
    }
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Callable[[], Any], timeout: float, interval: float = 0.25, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


class Server:
    """A `worldagent ...` server subprocess on a free loopback port (its own process group)."""

    def __init__(self, args: list[str], cwd: Path, port: int, log: Path) -> None:
        self.args, self.cwd, self.port, self.log = args, cwd, port, log
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        env = {**os.environ, "PYTHONPATH": str(PROJECT)}
        env.pop("LOCAL_TRAINER_URL", None)
        with self.log.open("ab") as handle:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "worldagent.cli", *self.args, "--port", str(self.port)],
                cwd=self.cwd,
                env=env,
                stdout=handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

        def up() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited: {self.log.read_text()[-2000:]}")
            try:
                return httpx.get(self.url + "/health", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up, 60, what=f"{self.args[:2]} on port {self.port}")
        return self

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.proc = None


def browser_input(task: str, ref: str, extra: str = "") -> dict[str, Any]:
    return {
        "pageSnapshot": f'- heading "Shop" [level=1]\n- button "{task}" [ref={ref}]\n- textbox "Search" [ref=s1]{extra}',
        "task": task,
    }


def raw_export_rows(count: int) -> list[dict[str, Any]]:
    """A raw feedback export as another platform writes it (input/output JSON-encoded strings)."""
    rows = []
    for i in range(count):
        action = ("click", "fill", "navigate")[i % 3]
        output = {
            "action": action,
            "selectorOrRef": f"[ref=e{i}]",
            "value": None if action == "click" else f"value {i}",
        }
        rows.append(
            {
                "targetType": "agent",
                "targetId": "agent-bench",
                "executionId": f"exec-{i // 5}",
                "input": json.dumps(browser_input(f"step {i}", f"e{i}")),
                "output": json.dumps(output),
                "label": "bad" if i % 10 == 9 else "good",
                "notes": None,
                "createdAt": "2026-01-01T00:00:00Z",
            }
        )
    return rows
