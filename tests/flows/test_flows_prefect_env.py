"""flows/_prefect_env.py: a generous start-up timeout for the temporary Prefect server, and a clear message."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flows._prefect_env import (
    DEFAULT_STARTUP_TIMEOUT_S,
    STARTUP_TIMEOUT_VARIABLE,
    PrefectStartError,
    configure_prefect_start,
    explain_prefect_start,
    one_server_for_local_workers,
    start_failure_message,
)
from worldagent.errors import RunError

ROOT = Path(__file__).resolve().parents[2]


def test_default_timeout_is_set_when_the_user_set_none() -> None:
    env: dict[str, str] = {}
    assert configure_prefect_start(env) == DEFAULT_STARTUP_TIMEOUT_S
    assert env[STARTUP_TIMEOUT_VARIABLE] == str(DEFAULT_STARTUP_TIMEOUT_S)
    assert env["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"


def test_the_users_timeout_wins() -> None:
    env = {STARTUP_TIMEOUT_VARIABLE: "45", "PREFECT_SERVER_ANALYTICS_ENABLED": "true"}
    assert configure_prefect_start(env) == 45
    assert env == {STARTUP_TIMEOUT_VARIABLE: "45", "PREFECT_SERVER_ANALYTICS_ENABLED": "true"}


def test_a_non_numeric_timeout_is_named() -> None:
    with pytest.raises(PrefectStartError, match=STARTUP_TIMEOUT_VARIABLE):
        configure_prefect_start({STARTUP_TIMEOUT_VARIABLE: "ten minutes"})


def test_prefects_timeout_becomes_one_clear_run_error() -> None:
    prefect_text = "Timed out while attempting to connect to ephemeral Prefect API server. stdout: ..."

    @explain_prefect_start
    def main() -> int:
        raise RuntimeError(prefect_text)

    with pytest.raises(RunError) as raised:
        main()
    message = str(raised.value)
    assert "\n" not in message
    assert "prefect server start" in message and "PREFECT_API_URL" in message and STARTUP_TIMEOUT_VARIABLE in message


def test_other_errors_pass_through_unchanged() -> None:
    assert start_failure_message(RuntimeError("CUDA out of memory")) is None
    assert (
        start_failure_message(ValueError("Timed out while attempting to connect to ephemeral Prefect API server"))
        is None
    )

    @explain_prefect_start
    def main() -> int:
        raise RuntimeError("something else")

    with pytest.raises(RuntimeError, match="something else"):
        main()


def test_no_server_is_started_without_local_workers_or_when_one_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    # The flow's own client starts its temporary server (or uses PREFECT_API_URL's) as Prefect always does.
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with one_server_for_local_workers(local_workers=False) as url:
        assert url is None
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    with one_server_for_local_workers(local_workers=True) as url:
        assert url is None
    monkeypatch.delenv("PREFECT_API_URL")
    from prefect.settings import PREFECT_API_URL, temporary_settings

    profile = temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:4200/api"})  # as a Prefect profile sets it
    with profile, one_server_for_local_workers(local_workers=True) as url:
        assert url is None


FLOW = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from flows._prefect_env import configure_prefect_start, prefect_imported_too_early
    assert not prefect_imported_too_early()
    configure_prefect_start()
    from prefect import flow, task

    @task
    def double(x: int) -> int:
        return 2 * x

    @flow
    def trivial() -> int:
        return double(21)

    print("result", trivial())
    """
)

# Spins every core until the deadline; bounded so that it stops by itself even if the test dies.
LOAD = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"


@pytest.mark.slow
def test_a_flow_completes_while_every_core_is_busy(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PREFECT_")}
    env["PREFECT_HOME"] = str(tmp_path / "prefect-home")  # a fresh server database: migrations run at start
    load_seconds = 240
    cores = os.cpu_count() or 2
    # Twice as many spinners as cores, so the server competes for every core.
    load = [subprocess.Popen([sys.executable, "-c", LOAD.format(seconds=load_seconds)]) for _ in range(2 * cores)]
    try:
        done = subprocess.run(
            [sys.executable, "-c", FLOW.format(root=str(ROOT))],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        for process in load:
            process.kill()
            process.wait()
    assert done.returncode == 0, done.stderr[-4000:]
    assert "result 42" in done.stdout
