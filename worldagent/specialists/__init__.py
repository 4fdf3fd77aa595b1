"""Browser specialists (DESIGN §5): feedback store, training-data strategies, trainer service, registry API.

- ``db``/``store``: the feedback store (SQLAlchemy; SQLite by default): feedback, improvement jobs,
  training runs, eval results, executions with their step trails, registered specialist models.
- ``decisions``: browser decisions ``{pageSnapshot, task} → {action, selectorOrRef, value}`` and
  their chat rendering.
- ``strategies``: ``from_feedback`` and ``from_runs`` → trl SFT conversations, preference pairs, raw export.
- ``trainer``/``worker``: the local trainer service (``POST /train``, ``GET /status/{runId}``) and
  the worker process that runs a short LoRA SFT.
- ``service``/``api``/``client``: the platform operations, their FastAPI app and the Python client.

No Prefect, no DVC imports here: ``flows/specialists.py`` is the thin flow.
"""
