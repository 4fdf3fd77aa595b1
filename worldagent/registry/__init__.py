"""Model registry (SQLAlchemy; SQLite by default), model cards, publishers and the deploy logic.

- ``api``: ``open_registry(url) -> Registry`` with versions, aliases, promote and rollback.
- ``cli``: ``add_models_commands(subparsers)`` for ``worldagent models list|show|promote|rollback``.
- ``modelcard``: ``render_model_card(...)``; ``publishers``: local folder and Hugging Face Hub.
- ``deploy``: gate decision -> registry, publishers and the champion alias (no Prefect, no DVC).
"""
