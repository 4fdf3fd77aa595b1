"""The world-agent policy: data generation, base models, SFT/DPO/GRPO training, rollouts, retrieval, experience."""
