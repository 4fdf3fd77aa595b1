"""The Prefect flows, built from the stage tables (``flows/_stages.py``).

Prefect reads its settings once, when first imported: the start-up timeout of its temporary server
is set here, before any flow module imports Prefect.
"""

from flows._prefect_env import configure_prefect_start

configure_prefect_start()
