"""The world-agent family: data generation, prompts, retrieval, the agent's environment, rewards, the
experience store and loop, its DPO and GRPO trainers and its evaluation (SFT is the shared
``worldagent.lm.sft``); its stages in ``stages/``."""
