"""intervention_simulate: deterministic episodes → a fresh SQLite experience store and screenshots."""

from __future__ import annotations

import logging
import os
from collections import Counter
from pathlib import Path
from typing import Any

from worldagent.config import Params
from worldagent.intervention.simulator import episode_to_task, plan_episodes, render_screenshot, simulate_episode
from worldagent.intervention.store import add_task, open_store
from worldagent.io import atomic_directory, atomic_write_text, pretty_json

log = logging.getLogger("worldagent.intervention")


def simulate_stage(
    params: Params, *, store: Path, screenshots: Path, report: Path, root: Path | None = None
) -> dict[str, Any]:
    """Episodes → the SQLite file ``store`` and the ``screenshots`` directory, both replaced
    atomically; a summary → ``report``. Screenshot paths are recorded in the store as given, or
    relative to ``root`` when one is given (and they lie under it)."""
    simulation = params.intervention.simulate
    recorded_dir = _relative(screenshots, root)
    tmp_db = store.with_name(f".{store.name}.tmp")
    tmp_db.unlink(missing_ok=True)
    store.parent.mkdir(parents=True, exist_ok=True)
    counts: Counter[str] = Counter()
    with atomic_directory(screenshots) as tmp_shots:
        experience = open_store(f"sqlite:///{tmp_db}")
        try:
            with experience.session() as session:
                plan = plan_episodes(
                    simulation.episodes, simulation.intervention_fraction, list(simulation.categories), params.seed
                )
                for index, category, intervention in plan:
                    episode = simulate_episode(params.seed, index, category, intervention, simulation.max_steps)
                    shots = []
                    for k, step in enumerate(episode.steps):
                        name = Path(episode.session_id) / f"{k:03d}.png"
                        png = render_screenshot(
                            step.scene,
                            category,
                            simulation.image_width,
                            simulation.image_height,
                            f"{params.seed}:{episode.session_id}:{k}",
                        )
                        out = tmp_shots / name
                        out.parent.mkdir(parents=True, exist_ok=True)
                        out.write_bytes(png)
                        shots.append((recorded_dir / name).as_posix())
                    add_task(session, episode_to_task(episode, shots), source="simulator")
                    counts[f"status.{episode.status}"] += 1
                    counts[f"cause.{episode.cause or 'none'}"] += 1
                    counts["steps"] += len(episode.steps)
        finally:
            experience.close()
    os.replace(tmp_db, store)
    rate = counts["status.intervention"] / max(simulation.episodes, 1)
    summary = {"episodes": simulation.episodes, **dict(sorted(counts.items())), "intervention_rate": rate}
    atomic_write_text(report, pretty_json(summary))
    log.info(
        "simulated %d episodes, %d steps, %.0f%% end in an intervention",
        simulation.episodes,
        counts["steps"],
        100 * rate,
    )
    return summary


def _relative(path: Path, root: Path | None) -> Path:
    if root is None:
        return path
    try:
        return path.relative_to(root)
    except ValueError:
        return path
