"""The project's one exception base, and the decorator that turns it into a clean command-line error.

Two branches, because a user needs to know whose move it is:

- ``InputError``: the input is wrong (a params key, a file, a line, a field). The message names it
  and the user fixes it; a traceback would only hide the message. Exit status 2.
- ``RunError``: the input was fine but the run could not finish (a service is down, a base model is
  missing). The message says what to do next. Exit status 1.

Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import ParamSpec

P = ParamSpec("P")

EXIT_RUN_ERROR = 1
EXIT_INPUT_ERROR = 2


class WorldAgentError(Exception):
    """Base of every error the project raises on purpose."""


class InputError(WorldAgentError, ValueError):
    """Bad input: the message names the file, line or field to fix."""


class RunError(WorldAgentError, RuntimeError):
    """A run that could not finish for a reason outside the input (a service, a missing model)."""


def clean_errors(main: Callable[P, int]) -> Callable[P, int]:
    """Wrap a command's ``main``: project errors become one ``error: ...`` line and an exit status."""

    @functools.wraps(main)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> int:
        try:
            return main(*args, **kwargs)
        except InputError as error:
            print(f"error: {error}", file=sys.stderr)
            return EXIT_INPUT_ERROR
        except RunError as error:
            print(f"error: {error}", file=sys.stderr)
            return EXIT_RUN_ERROR

    return wrapper
