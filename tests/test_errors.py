"""worldagent.errors: every project error is an InputError or a RunError; a library's own errors are neither."""

from __future__ import annotations

import pytest
import torch

from worldagent.config import ParamsError
from worldagent.errors import InputError, RunError, clean_errors
from worldagent.intervention.serve import BundleError
from worldagent.lm.base import BaseModelUnavailable
from worldagent.lm.training import TrainingError
from worldagent.registry.api import RegistryBusyError
from worldagent.registry.deploy import DeployError
from worldagent.registry.publishers import PublishError
from worldagent.specialists.service import ServiceError
from worldagent.specialists.store import NotFound
from worldagent.tools.sandbox import SandboxError


def test_project_errors_sit_on_the_two_branches_and_keep_their_old_bases() -> None:
    for error in (ParamsError, TrainingError, BundleError, DeployError, ServiceError, SandboxError, NotFound):
        assert issubclass(error, InputError) and issubclass(error, ValueError)
    for error in (PublishError, RegistryBusyError, BaseModelUnavailable):
        assert issubclass(error, RunError)
    assert issubclass(BaseModelUnavailable, OSError) and issubclass(NotFound, LookupError)


def test_clean_errors_prints_one_line_for_input_errors_and_keeps_tracebacks_for_the_rest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    @clean_errors
    def bad_input() -> int:
        raise TrainingError("data.jsonl:3: invalid JSON")

    @clean_errors
    def torch_failure() -> int:
        # torch's own ValueError is a bug to see with its traceback, never a one-line "bad input"
        torch.nn.functional.binary_cross_entropy(torch.zeros(2), torch.zeros(3))
        return 0

    assert bad_input() == 2 and capsys.readouterr().err == "error: data.jsonl:3: invalid JSON\n"
    with pytest.raises(ValueError) as caught:
        torch_failure()
    assert not isinstance(caught.value, InputError) and capsys.readouterr().err == ""
