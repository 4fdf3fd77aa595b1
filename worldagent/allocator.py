"""Give freed memory back to the operating system, so a stage's peak RSS is what it really holds.

glibc's malloc raises its mmap threshold each time a large block is freed (up to 32 MiB on 64-bit):
after the first training step, activations and gradients of a few MiB come from the heap, and
what a step frees stays in the process as holes between live blocks. On SmolLM2's DPO stage that
was ~1.7 GB of a 7.3 GB peak (docs/profiles.md, "Memory"). Fixing the threshold keeps blocks above
it in their own mappings, returned on free; the arena cap keeps threads from holding one heap each.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)

# mallopt parameters (glibc's malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8

MMAP_THRESHOLD_BYTES = 128 * 1024  # glibc's own starting value, kept fixed
ARENA_MAX = 2


def return_freed_memory() -> bool:
    """Fix glibc's mmap and trim thresholds and cap its arenas; False (and nothing changed) where the
    C library is not glibc. Call it once, early in a process that frees large blocks step after step."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name)
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None or not hasattr(libc, "gnu_get_libc_version"):
        return False
    settings = (
        (M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES),
        (M_TRIM_THRESHOLD, MMAP_THRESHOLD_BYTES),
        (M_ARENA_MAX, ARENA_MAX),
    )
    applied = all(mallopt(parameter, value) == 1 for parameter, value in settings)
    log.debug("malloc: mmap threshold %d bytes, %d arenas: %s", MMAP_THRESHOLD_BYTES, ARENA_MAX, applied)
    return applied
