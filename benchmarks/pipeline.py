"""Whole-pipeline timings: a full `dvc repro`, a no-op `dvc repro`, and a no-op Prefect flow run.

Peak memory is the largest resident set of any stage process (getrusage of the children).
Targets (issue 3): full DAG ≤ 15 min with peak < 4 GB on the 2-core CPU; no-op `dvc repro` < 5 s;
no-op Prefect flow < 30 s.

    python -m benchmarks.pipeline            # measures the no-op runs only (after `make pipeline`)
    python -m benchmarks.pipeline --full     # forces every stage to run first (dvc repro --force)
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import arguments, peak_rss_mb, print_json

VENV_BIN = Path(sys.executable).parent


def timed(*command: str) -> float:
    env = dict(
        os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}", PREFECT_SERVER_ANALYTICS_ENABLED="false"
    )
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--full", action="store_true", help="rerun every stage first (dvc repro --force)")
    args = parser.parse_args()
    results: dict[str, float] = {}
    if args.full:
        results["full_dvc_repro_s"] = timed(str(VENV_BIN / "dvc"), "repro", "--force")
        results["peak_rss_gb"] = peak_rss_mb(children=True) / 1024
    results["noop_dvc_repro_s"] = timed(str(VENV_BIN / "dvc"), "repro")
    results["noop_prefect_flow_s"] = timed(sys.executable, "-m", "flows.world_agent", "--no-deploy")
    print_json({k: round(v, 2) for k, v in results.items()})


if __name__ == "__main__":
    main()
