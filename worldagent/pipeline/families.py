"""Every family's stage table, in the order their stages appear in dvc.yaml."""

from worldagent.pipeline import intervention, world_agent
from worldagent.pipeline.table import Pipeline

PIPELINES: tuple[Pipeline, ...] = (world_agent.PIPELINE, intervention.PIPELINE)
