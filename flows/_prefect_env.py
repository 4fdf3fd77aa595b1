"""Prefect's environment for the flows, set before Prefect is imported (this module imports no Prefect).

A flow run without ``PREFECT_API_URL`` starts a temporary Prefect server and waits for it to answer;
Prefect 3 waits ``PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS`` (default 20 s), which a busy
two-core machine exceeds (it runs the server's database migrations first). Prefect reads its
settings once, when it is first imported, so ``configure_prefect_start`` must run before any
``import prefect``: ``flows/__init__.py`` is the place, since ``python -m flows.<family>`` imports
the package first.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator, MutableMapping
from typing import ParamSpec, TypeVar

from worldagent.errors import RunError

STARTUP_TIMEOUT_VARIABLE = "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"
# Generous: a run is minutes to hours, and waiting longer for the server costs nothing when it is quick.
DEFAULT_STARTUP_TIMEOUT_S = 600
# Prefect's own text when the temporary server does not answer in time (prefect/server/api/server.py).
_PREFECT_START_FAILURE = "Timed out while attempting to connect to ephemeral Prefect API server"

P = ParamSpec("P")
R = TypeVar("R")


class PrefectStartError(RunError):
    """The temporary Prefect server did not come up; the message says what to do (``clean_errors`` prints it)."""


def configure_prefect_start(environ: MutableMapping[str, str] | None = None) -> int:
    """Give the temporary Prefect server a generous start-up timeout unless the user chose one.

    Also turns off Prefect's analytics (an outgoing request) unless set. Returns the timeout in force.
    Has no effect on an already imported Prefect (see ``prefect_imported_too_early``).
    """
    env = os.environ if environ is None else environ
    env.setdefault(STARTUP_TIMEOUT_VARIABLE, str(DEFAULT_STARTUP_TIMEOUT_S))
    env.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    return startup_timeout_s(env)


def startup_timeout_s(environ: MutableMapping[str, str] | None = None) -> int:
    """The start-up timeout in force (seconds), as Prefect will read it."""
    env = os.environ if environ is None else environ
    value = env.get(STARTUP_TIMEOUT_VARIABLE, "20")
    try:
        return int(value)
    except ValueError:
        raise PrefectStartError(f"{STARTUP_TIMEOUT_VARIABLE}={value!r} is not a whole number of seconds") from None


def prefect_imported_too_early() -> bool:
    """True when Prefect was imported before ``configure_prefect_start`` could take effect."""
    return "prefect.settings" in sys.modules


def start_failure_message(error: BaseException, environ: MutableMapping[str, str] | None = None) -> str | None:
    """One clear line for Prefect's start-up timeout (None for any other error)."""
    if not isinstance(error, RuntimeError) or _PREFECT_START_FAILURE not in str(error):
        return None
    return (
        f"the temporary Prefect server did not answer within {startup_timeout_s(environ)} s "
        "(a busy machine starts it slowly). Raise "
        f"{STARTUP_TIMEOUT_VARIABLE}, or start one server for every run: "
        "`prefect server start` in another terminal, then "
        "`export PREFECT_API_URL=http://127.0.0.1:4200/api`"
    )


def explain_prefect_start(main: Callable[P, R]) -> Callable[P, R]:
    """Wrap a flow's command ``main``: Prefect's start-up timeout becomes ``PrefectStartError`` with advice."""

    @functools.wraps(main)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return main(*args, **kwargs)
        except RuntimeError as error:
            message = start_failure_message(error)
            if message is None:
                raise
            raise PrefectStartError(message) from error

    return wrapper


@contextlib.contextmanager
def one_server_for_local_workers(local_workers: bool) -> Iterator[str | None]:
    """Run what is inside against one temporary Prefect server that local worker processes share.

    Without ``PREFECT_API_URL``, every process that runs a Prefect task starts its own temporary
    server: a local Dask cluster's workers are processes, so a flow on it started one server per
    worker besides its own, each migrating the same SQLite database at once (minutes on a busy small
    machine, where the flow looked hung). Here the flow's process starts the one server Prefect would
    have started for it, and points Prefect's settings at it; the Dask task runner sends those
    settings with every task, so the workers use it too. Yields the server's API URL (None when
    nothing was started: no local workers, or a server already named by ``PREFECT_API_URL`` in the
    environment or the active Prefect profile).
    """
    from prefect.settings import PREFECT_API_URL, temporary_settings

    # The environment, or a Prefect profile (`prefect config set PREFECT_API_URL=...`), names a server.
    if not local_workers or os.environ.get("PREFECT_API_URL") or PREFECT_API_URL.value():
        yield None
        return
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()  # the instance Prefect's own client would start in this process
    server.start(timeout=startup_timeout_s())
    try:
        with temporary_settings(updates={PREFECT_API_URL: server.api_url}):
            yield server.api_url
            # Send the last logs and events while the server still answers (as Prefect's test harness does).
            APILogWorker.drain_all(timeout=30)
            EventsWorker.drain_all(timeout=30)
    finally:
        server.stop()
