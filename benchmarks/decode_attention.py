"""Decode-step attention: the project's kernel against torch's SDPA, and against memory bandwidth.

One decode step's attention as the evaluation runs it: ``--rows`` rows of one query token, each
attending to ``--columns`` cached positions of SmolLM2-135M's shape (9 query heads sharing 3
key/value heads of 64), the cache a view into a wider buffer as the continuous batch keeps it, the
first ``--masked`` share of each row's columns masked, called once for each of ``--layers`` layers,
each with a cache of its own. A step reads every layer's cache once, gigabytes that come from
memory; one layer called again and again (``--layers 1``) reads from the last-level cache instead
and overstates what a step gets. Reports, per dtype and thread count, the milliseconds of a call
(one layer; best of ``--repeats`` rounds over the layers), the cache bytes read a second, that rate
as a share of what this machine reads memory at (a ``sum`` over a 1 GiB tensor), and the largest
difference of each output from float64. ``--samples N`` makes the rows groups of N samples of one
prompt, sharing its first ``--shared`` columns (the experience loop's and GRPO's shape), which the
kernel reads once a group. Where the kernel computes bfloat16 scores on AMX tiles, ``kernel-loops``
is the same call on its loops (``WORLDAGENT_DECODE_ATTENTION=loops``).

    python -m benchmarks.decode_attention [--rows 34] [--columns 1650] [--layers 30] [--threads 1,2]
        [--samples 4 --shared 1100] [--json]
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from benchmarks.common import arguments, print_json

HEADS, KV_HEADS, HEAD_DIM = 9, 3, 64


def best_ms(call: Callable[[], Any], repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return 1000 * min(times)


def memory_read_gbs(threads: int, repeats: int) -> float:
    """Bytes a second this process reads with ``threads`` threads (a float32 ``sum`` of 1 GiB: larger
    than a last-level cache)."""
    import torch

    torch.set_num_threads(threads)
    data = torch.ones(256 * 1024 * 1024)
    return data.numel() * 4 / best_ms(data.sum, repeats) / 1e6


def one_layer(
    rows: int,
    columns: int,
    masked: float,
    dtype: Any,
    threads: int,
    repeats: int,
    layers: int = 1,
    samples: int = 1,
    shared: int = 0,
) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    from worldagent.lm import decode_attention as da

    torch.set_num_threads(threads)
    generator = torch.Generator().manual_seed(0)
    query = torch.randn(rows, HEADS, 1, HEAD_DIM, generator=generator).to(dtype)
    caches = [
        [
            torch.randn(rows, KV_HEADS, columns + 256, HEAD_DIM, generator=generator).to(dtype)[:, :, :columns]
            for _ in range(2)
        ]
        for _ in range(layers)
    ]
    key, value = caches[0]
    groups = [row // samples for row in range(rows)]
    starts = (torch.rand(rows, generator=generator) * masked * columns).long()[groups]  # one prompt, one start
    mask = (torch.arange(columns)[None, :] >= starts[:, None])[:, None, None, :]
    for layer_cache in caches:  # a group's rows hold its first row's prompt columns
        for tensor in layer_cache:
            tensor[:, :, :shared] = tensor[[group * samples for group in groups], :, :shared]
    layout = da.shared_columns(groups, shared) if samples > 1 else None

    class Layer(torch.nn.Module):
        num_key_value_groups = HEADS // KV_HEADS

    layer = Layer()
    packed = query.view(rows, KV_HEADS, HEADS // KV_HEADS, HEAD_DIM)  # transformers' pack_gqa for one token

    def sdpa(key: Any = key, value: Any = value) -> Any:
        return F.scaled_dot_product_attention(packed, key, value, attn_mask=mask)

    def kernel(key: Any = key, value: Any = value) -> Any:
        return da.decode_attention(layer, query, key, value, mask, shared=layout)[0]

    def loops(key: Any = key, value: Any = value) -> Any:
        library = da.kernel()
        library.decode_attention_amx(0)
        try:
            return kernel(key, value)
        finally:
            library.decode_attention_amx(1)

    def every_layer(call: Callable[..., Any]) -> Callable[[], None]:
        def step() -> None:
            for key, value in caches:
                call(key, value)

        return step

    exact = F.scaled_dot_product_attention(
        query.double(), key.double().repeat_interleave(3, 1), value.double().repeat_interleave(3, 1), attn_mask=mask
    ).transpose(1, 2)
    read = (key.numel() + value.numel()) * key.element_size()  # the rows' own copies: what SDPA reads
    figures: dict[str, Any] = {
        "dtype": str(dtype).removeprefix("torch."),
        "threads": threads,
        "cache_mb": read / 1e6,
        "layers": layers,
    }
    calls = [("sdpa", sdpa), ("kernel", kernel)]
    if dtype == torch.bfloat16 and da.tiles():
        calls.append(("kernel-loops", loops))
    for name, call in calls:
        out = call().reshape(rows, 1, HEADS, HEAD_DIM)
        ms = best_ms(every_layer(call), repeats) / layers
        figures[name] = {
            "ms": round(ms, 3),
            "gb_per_s": round(read / ms / 1e6, 2),
            "max_error": float((out.double() - exact).abs().max()),
        }
    figures["speedup"] = round(figures["sdpa"]["ms"] / figures["kernel"]["ms"], 2)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--rows", type=int, default=34, help="rows decoded together (evaluate.batch_size)")
    parser.add_argument("--columns", type=int, default=1650, help="cached positions a row attends to")
    parser.add_argument("--masked", type=float, default=0.25, help="largest share of a row's columns masked")
    parser.add_argument("--threads", default="1,2", help="torch threads to measure, comma-separated")
    parser.add_argument("--layers", type=int, default=30, help="layers called in turn, each with its own cache")
    parser.add_argument("--samples", type=int, default=1, help="rows a prompt's group holds (1: no groups)")
    parser.add_argument("--shared", type=int, default=0, help="leading columns a group's rows share (its prompt)")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)

    import torch

    from worldagent.lm import decode_attention as da

    if da.kernel() is None:
        parser.error("the kernel did not build here (no C compiler?): nothing to compare")
    if args.samples < 1 or not 0 <= args.shared <= args.columns:
        parser.error(f"--samples must be at least 1 and --shared within 0..{args.columns}")
    results = []
    for threads in (int(value) for value in args.threads.split(",")):
        bandwidth = memory_read_gbs(threads, args.repeats)
        for dtype in (torch.bfloat16, torch.float32):
            figures = one_layer(
                args.rows,
                args.columns,
                args.masked,
                dtype,
                threads,
                args.repeats,
                args.layers,
                args.samples,
                args.shared,
            )
            figures["memory_gb_per_s"] = round(bandwidth, 2)
            for name in ("sdpa", "kernel", "kernel-loops"):
                if name in figures:
                    figures[name]["share_of_memory_bandwidth"] = round(figures[name]["gb_per_s"] / bandwidth, 3)
            results.append(figures)
    report = {
        "rows": args.rows,
        "columns": args.columns,
        "masked": args.masked,
        "layers": args.layers,
        "samples": args.samples,
        "shared": args.shared,
        "results": results,
    }
    if args.json:
        print_json(report)
        return 0
    print(
        f"decode attention, a layer's call: {args.rows} rows x {args.columns} columns, {HEADS}/{KV_HEADS} heads of"
        f" {HEAD_DIM}, {args.layers} layers' caches in turn"
        + (f", groups of {args.samples} sharing {args.shared} columns" if args.samples > 1 else "")
    )
    for figures in results:
        line = (
            f"  {figures['dtype']:>8} {figures['threads']} thread(s), {figures['cache_mb']:.1f} MB of cache a layer: "
        )
        for name in ("sdpa", "kernel", "kernel-loops"):
            if name not in figures:
                continue
            part = figures[name]
            line += f"{name} {part['ms']:.2f} ms ({part['gb_per_s']:.1f} GB/s, "
            line += f"{part['share_of_memory_bandwidth']:.0%} of {figures['memory_gb_per_s']:.1f}) "
        print(line + f"-> {figures['speedup']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
