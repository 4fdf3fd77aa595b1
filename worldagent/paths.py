"""Where each family's stages read and write, relative to the project root (the defaults the stage
entry points pass to the library's stage functions, which themselves take explicit paths)."""

from __future__ import annotations

from pathlib import Path

# -- the world agent ----------------------------------------------------------------------------
WORLD_AGENT_DATA = Path("data/generated/world_agent")
WORLD_AGENT_MANIFEST = WORLD_AGENT_DATA / "manifest.json"
WORLD_AGENT_EVAL_ROWS = WORLD_AGENT_DATA / "trajectories.eval.jsonl"
WORLD_AGENT_MODELS = Path("models/world_agent")
WORLD_AGENT_REPORTS = Path("reports/world_agent")
WORLD_AGENT_EVAL = WORLD_AGENT_REPORTS / "eval.json"
WORLD_AGENT_EVAL_INTENTS = WORLD_AGENT_REPORTS / "eval_intents.jsonl"
WORLD_AGENT_REPORT = WORLD_AGENT_REPORTS / "report.md"
WORLD_AGENT_COMPARE = WORLD_AGENT_REPORTS / "compare.json"
WORLD_AGENT_GATE = WORLD_AGENT_REPORTS / "gate.json"
WORLD_AGENT_CHAMPION = WORLD_AGENT_MODELS / "champion.json"  # the champion reference evaluate reads

# -- the intervention predictor -----------------------------------------------------------------
INTERVENTION_DATA = Path("data/generated/intervention")
INTERVENTION_STEPS = INTERVENTION_DATA / "steps.jsonl"
INTERVENTION_MANIFEST = INTERVENTION_DATA / "manifest.json"
INTERVENTION_EMBEDDINGS = INTERVENTION_DATA / "embeddings"
INTERVENTION_MODELS = Path("models/intervention")
INTERVENTION_ENCODER = INTERVENTION_MODELS / "encoder"
INTERVENTION_PREDICTOR = INTERVENTION_MODELS / "predictor"
INTERVENTION_REPORTS = Path("reports/intervention")
INTERVENTION_METRICS = INTERVENTION_REPORTS / "evaluation_metrics.json"
INTERVENTION_PREDICTIONS = INTERVENTION_REPORTS / "test_predictions.jsonl"
INTERVENTION_COMPARE = INTERVENTION_REPORTS / "compare.json"
INTERVENTION_GATE = INTERVENTION_REPORTS / "gate.json"
INTERVENTION_REPORT = INTERVENTION_REPORTS / "report.md"
INTERVENTION_CHAMPION = INTERVENTION_MODELS / "champion.json"
