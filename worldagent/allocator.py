"""Give freed memory back to the operating system, so a stage's peak RSS is what it really holds.

glibc's malloc raises its mmap threshold each time a large block is freed (up to 32 MiB on 64-bit):
after the first training step, activations and gradients of a few MiB come from the heap, and
what a step frees stays in the process as holes between live blocks. On SmolLM2's DPO stage that
was ~1.7 GB of a 7.3 GB peak; its SFT grew from 3.3 GB after one step to 9.36 GB after 99
(docs/profiles.md, "Memory"). Two remedies, a training section's ``freed_memory``:

- ``trim``: :func:`trim_freed_memory` after every micro-batch hands the heap's free pages back
  (``malloc_trim``); the holes stay but cost no memory. One call per micro-batch: no slower.
- ``unmap``: :func:`return_freed_memory` before the model loads fixes the threshold, so blocks above
  it live in their own mappings, returned on free: the lowest peak, but every such block is mapped
  anew (~1.1-1.6x the step time on a CPU).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from functools import cache
from typing import Any

log = logging.getLogger(__name__)

# mallopt parameters (glibc's malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8

MMAP_THRESHOLD_BYTES = 128 * 1024  # glibc's own starting value, kept fixed
ARENA_MAX = 2


@cache
def _glibc() -> Any | None:
    """The C library when it is glibc (mallopt and malloc_trim are glibc's), else None."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    libc = ctypes.CDLL(name)
    return libc if hasattr(libc, "gnu_get_libc_version") and hasattr(libc, "malloc_trim") else None


def return_freed_memory() -> bool:
    """Fix glibc's mmap and trim thresholds and cap its arenas; False (and nothing changed) where the
    C library is not glibc. Call it once, early in a process that frees large blocks step after step."""
    libc = _glibc()
    if libc is None:
        return False
    mallopt = libc.mallopt
    settings = (
        (M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES),
        (M_TRIM_THRESHOLD, MMAP_THRESHOLD_BYTES),
        (M_ARENA_MAX, ARENA_MAX),
    )
    applied = all(mallopt(parameter, value) == 1 for parameter, value in settings)
    log.debug("malloc: mmap threshold %d bytes, %d arenas: %s", MMAP_THRESHOLD_BYTES, ARENA_MAX, applied)
    return applied


def trim_freed_memory() -> bool:
    """Hand the free pages of glibc's heaps back to the OS now; False where the C library is not glibc."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
