"""Torch threads are set explicitly, never left to whatever the machine's load makes fastest today."""

from __future__ import annotations

import pytest
import torch

from worldagent.policy.device import THREADS_ENV, configure_threads


def test_threads_are_set_explicitly_one_on_cpu_unless_the_environment_says() -> None:
    before = torch.get_num_threads()
    try:
        assert configure_threads("cpu", {}) == 1 and torch.get_num_threads() == 1
        assert configure_threads("cpu", {THREADS_ENV: "2"}) == 2 and torch.get_num_threads() == 2
        with pytest.raises(ValueError, match=THREADS_ENV):
            configure_threads("cpu", {THREADS_ENV: "many"})
    finally:
        torch.set_num_threads(before)
