"""Intervention predictor (DESIGN.md section 4): learn, from a browser agent's recorded runs, to
predict at each step whether a human is about to be needed.

- ``store``: the experience store (SQLAlchemy; SQLite default): tasks, steps, interventions.
- ``recorder``: the API an agent calls while it runs, and a Playwright page-state capture helper.
- ``importer``: logs in the reference tool's export shape (interventions/successes/manifest JSON).
- ``simulator``: the embedded default data, deterministic episodes with rendered screenshots.
- ``dataset``: labelled steps, split by session, features (nested page state, action vocabulary).
- ``clip``: the frozen open_clip visual tower and screenshot embedding.
- ``model``: experience encoder (visual + action transformer + page-state MLP) and predictor head.
- ``train``: supervised contrastive training, then the predictor on the frozen encoder.
- ``metrics``: threshold choice, metrics, baselines, plots; ``serve``: ``InterventionPredictor``.

No Prefect and no DVC imports here.
"""
