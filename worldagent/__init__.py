"""world-agent-pipeline library: pure, typed stage logic (no Prefect, no DVC imports)."""

__version__ = "0.1.0"
