"""The intervention predictor's stages, one module each, as plain typed functions of params and
explicit paths (no Prefect, no DVC):

simulate → export → embed → train_encoder → train_predictor → evaluate → compare → gate (→ deploy,
the shared :func:`worldagent.registry.deploy.deploy`).

Each module has its ``<stage>_stage(params, *, paths...)`` function; the paths come from the
family's stage table (``worldagent/pipeline/intervention.py``).
"""

from worldagent.intervention.stages import (
    compare,
    embed,
    evaluate,
    export,
    gate,
    simulate,
    train_encoder,
    train_predictor,
)

ORDER = (simulate, export, embed, train_encoder, train_predictor, evaluate, compare, gate)

__all__ = ["ORDER", "compare", "embed", "evaluate", "export", "gate", "simulate", "train_encoder", "train_predictor"]
