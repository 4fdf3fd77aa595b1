"""worldagent.allocator: freed blocks go back to the operating system instead of staying in the heap."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from worldagent.config import DpoParams, Params

# Allocates 100 blocks of 2 MiB after glibc's dynamic threshold has risen above them (as it does after
# a training step frees a large tensor), frees every other one, and prints the RSS growth in KiB.
FRAGMENT = """
import ctypes, sys
from worldagent.allocator import return_freed_memory

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


@pytest.mark.parametrize("setting", [True, False])
def test_the_dpo_stage_returns_freed_memory_only_when_its_params_ask(
    setting: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It costs ~1.6x the step time on a CPU (docs/profiles.md, "Memory"): a profile opts in.
    import tasks.dpo

    calls: list[str] = []
    monkeypatch.setattr(tasks.dpo, "return_freed_memory", lambda: calls.append("allocator") or True)
    monkeypatch.setattr(
        tasks.dpo, "train_dpo", lambda *a, **k: calls.append("train") or {"global_step": 1, "wall_s": 0}
    )
    params = Params().model_copy(update={"dpo": DpoParams(return_freed_memory=setting)})
    paths = {
        name: tmp_path / name for name in ("base", "experience", "preferences", "experience_pairs", "out", "curves")
    }
    tasks.dpo.run(params, metrics=tmp_path / "metrics.json", **paths)
    assert calls == (["allocator", "train"] if setting else ["train"])
    assert json.loads((tmp_path / "metrics.json").read_text())["global_step"] == 1
