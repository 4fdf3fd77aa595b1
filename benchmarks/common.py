"""What the benchmarks share: their command line, their JSON output and peak memory. Where
`make pipeline` leaves the files they read is ``worldagent.pipeline.world_agent``'s stage table."""

from __future__ import annotations

import argparse
import json
import resource
import socket


def arguments(doc: str | None, json_help: str = "print the figures as one JSON object") -> argparse.ArgumentParser:
    """A benchmark's parser: its docstring's first line, and ``--json``."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help=json_help)
    return parser


def free_port() -> int:
    """A loopback TCP port no process holds now (for a service a benchmark starts)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def print_json(figures: object) -> None:
    print(json.dumps(figures, indent=2))


def peak_rss_mb(children: bool = False) -> float:
    """The largest resident set of this process (or of its waited-for children), in MiB (Linux: KiB)."""
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss / 1024
