from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fake_hub import FakeHub, FakeHubServer  # noqa: E402


@pytest.fixture
def fake_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A fake Hub on 127.0.0.1; any attempt to resolve another host fails the test run's request."""
    from huggingface_hub.utils import _detect_agent

    # huggingface_hub fetches an "agent harnesses" list from huggingface.co for its user agent:
    # pretend it was already loaded (empty) so nothing leaves the machine.
    monkeypatch.setattr(_detect_agent, "_registry", _detect_agent._EMPTY_REGISTRY, raising=False)
    real_getaddrinfo = socket.getaddrinfo

    def loopback_only(host: str, *args: object, **kwargs: object) -> object:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise OSError(f"test tried to reach {host}: only the fake Hub on 127.0.0.1 is allowed")
        return real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", loopback_only)
    with FakeHubServer() as hub:
        yield hub


@pytest.fixture
def adapter_dir(tmp_path: Path) -> Path:
    """A small PEFT-like adapter directory with training leftovers that must not be published."""
    directory = tmp_path / "models" / "world_agent" / "grpo"
    directory.mkdir(parents=True)
    (directory / "adapter_config.json").write_text('{"peft_type": "LORA", "r": 16, "lora_alpha": 16}\n')
    (directory / "adapter_model.safetensors").write_bytes(bytes(range(256)) * 4)
    (directory / "tokenizer.json").write_text('{"version": "1.0"}\n')
    (directory / "checkpoint-10").mkdir()
    (directory / "checkpoint-10" / "optimizer.pt").write_bytes(b"opt")
    (directory / ".partial").write_text("x")
    return directory
