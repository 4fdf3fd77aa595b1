"""worldagent.allocator: freed blocks go back to the operating system instead of staying in the heap."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from worldagent.config import FreedMemory, TrainerParams

# Allocates 100 blocks of 2 MiB after glibc's dynamic threshold has risen above them (as it does after
# a training step frees a large tensor), frees every other one, and prints the RSS growth in KiB.
FRAGMENT = """
import ctypes, sys
from worldagent.allocator import return_freed_memory, trim_freed_memory

def rss_kib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))

if sys.argv[1] == "on":
    assert return_freed_memory()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
block = 2 << 20
libc.free(libc.malloc(4 * block))
before = rss_kib()
blocks = [libc.malloc(block) for _ in range(100)]
for address in blocks:
    libc.memset(address, 1, block)
for address in blocks[::2]:
    libc.free(address)
if sys.argv[1] == "trim":
    assert trim_freed_memory()
print(rss_kib() - before)
"""


def _rss_growth_kib(setting: str) -> int:
    # glibc reads MALLOC_* at start-up, and any of them turns its dynamic threshold off: dask's nanny
    # sets MALLOC_TRIM_THRESHOLD_ in the process that starts it, so a dask test earlier in the same
    # worker would make "off" look like "on".
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    done = subprocess.run(
        [sys.executable, "-c", FRAGMENT, setting], capture_output=True, text=True, timeout=60, env=environ
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_freed_blocks_leave_the_process_instead_of_staying_as_holes_in_the_heap() -> None:
    kept_by_default = _rss_growth_kib("off")
    returned = _rss_growth_kib("on")
    assert kept_by_default > 180 * 1024  # all 100 blocks still resident: the freed half is holes
    assert returned < 120 * 1024  # only the 50 live blocks


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_trimming_hands_the_holes_pages_back_without_changing_the_threshold() -> None:
    kept_by_default = _rss_growth_kib("off")
    trimmed = _rss_growth_kib("trim")
    assert kept_by_default > 180 * 1024
    assert trimmed < 120 * 1024  # the freed half's pages are gone; only the 50 live blocks remain


@pytest.mark.parametrize(("setting", "allocator_calls", "callbacks"), [("keep", 0, 0), ("trim", 0, 1), ("unmap", 1, 0)])
def test_each_freed_memory_setting_does_what_it_says(
    setting: FreedMemory, allocator_calls: int, callbacks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from worldagent.lm import training

    calls: list[str] = []
    monkeypatch.setattr(training, "return_freed_memory", lambda: calls.append("unmap") or True)
    monkeypatch.setattr(training, "trim_freed_memory", lambda: calls.append("trim") or True)
    made = training.freed_memory_callbacks(setting)
    assert calls == ["unmap"] * allocator_calls and len(made) == callbacks
    for callback in made:  # after every micro-batch: the substeps and the optimizer step's last one
        callback.on_substep_end(None, None, None)
        callback.on_step_end(None, None, None)
    assert calls == ["unmap"] * allocator_calls + ["trim", "trim"] * callbacks


def test_the_profiles_trim_sft_and_unmap_dpo_and_the_default_keeps() -> None:
    assert TrainerParams().freed_memory == "keep"
    cpu = yaml.safe_load((Path(__file__).resolve().parents[1] / "profiles" / "cpu.yaml").read_text())
    assert cpu["sft"]["freed_memory"] == "trim" and cpu["dpo"]["freed_memory"] == "unmap"
