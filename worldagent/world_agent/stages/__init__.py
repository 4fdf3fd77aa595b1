"""The world agent's stages, one module each so that each stage depends on its own code only (a
change to the gate never reruns evaluation): discover, generate, base, sft, experience, dpo, grpo,
evaluate_model (one cached step per model), evaluate, compare and gate. The family's stage table
(``worldagent/pipeline/world_agent.py``) names each one with its paths and params.
"""
