"""Behavioral programming: b-threads, super-steps, and the agent's constraints."""

from .constraints import (
    AgentConstraints,
    ContentCheck,
    Decision,
    Violation,
    default_constraint_rules,
    tool_event,
)
from .engine import BPEvent, BThread, Program, SyncPoint, behavioral, bsync, bthread

__all__ = [
    "AgentConstraints",
    "BPEvent",
    "BThread",
    "ContentCheck",
    "Decision",
    "Program",
    "SyncPoint",
    "Violation",
    "behavioral",
    "bsync",
    "bthread",
    "default_constraint_rules",
    "tool_event",
]
