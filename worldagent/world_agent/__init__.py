"""The world-agent family: data generation, prompts, retrieval, the agent's environment, rewards, the
experience store and loop, its trainers (SFT, DPO, GRPO) and its evaluation; its stages in ``stages/``."""
