"""Each model family's stages, declared once (``world_agent.py``, ``intervention.py``).

From a family's table come the ``python -m tasks.<stage>`` command and the exact dependencies of each
``dvc.yaml`` stage (``dvcfile.py``, ``deps.py``), the Prefect tasks and each flow's order (``flows/``).
Nothing here imports Prefect or DVC, and no stage imports this package, so editing a table never
reruns a stage by itself: only the ``dvc.yaml`` it generates does, where a stage's command, paths or
params changed.
"""
