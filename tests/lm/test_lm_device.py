"""Torch threads are set explicitly, never left to whatever the machine's load makes fastest today; the
precision follows what the hardware multiplies natively where params.yaml asks it to."""

from __future__ import annotations

import pytest
import torch

from worldagent.lm import device as device_module
from worldagent.lm.device import THREADS_ENV, configure_threads, resolve_dtype


def test_threads_are_set_explicitly_one_on_cpu_unless_the_environment_says() -> None:
    before = torch.get_num_threads()
    try:
        assert configure_threads("cpu", {}) == 1 and torch.get_num_threads() == 1
        assert configure_threads("cpu", {THREADS_ENV: "2"}) == 2 and torch.get_num_threads() == 2
        with pytest.raises(ValueError, match=THREADS_ENV):
            configure_threads("cpu", {THREADS_ENV: "many"})
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize(("native", "expected"), [(True, torch.bfloat16), (False, torch.float32)])
def test_prefer_bfloat16_follows_whether_the_cpu_multiplies_it_natively(
    monkeypatch: pytest.MonkeyPatch, native: bool, expected: torch.dtype
) -> None:
    monkeypatch.setattr(device_module, "cpu_multiplies_bfloat16", lambda: native)
    assert resolve_dtype("prefer-bfloat16", "cpu") is expected
    assert resolve_dtype("auto", "cpu") is torch.float32  # auto stays float32 on any CPU
    assert resolve_dtype("prefer-bfloat16", "mps") is torch.float32


def test_the_cpu_check_is_torchs_own_routing_of_bfloat16_products() -> None:
    assert device_module.cpu_multiplies_bfloat16() is bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
