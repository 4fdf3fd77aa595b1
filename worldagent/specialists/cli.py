"""``worldagent trainer serve`` and ``worldagent specialists ...`` (thin: parse, call, print JSON)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from worldagent import safejson
from worldagent.errors import clean_errors

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
DEFAULT_SERVICE_URL = "http://127.0.0.1:8766"


def _params(path: str | None) -> Any:
    from worldagent.config import Params, load_params

    if path is None:
        return load_params("params.yaml") if Path("params.yaml").is_file() else Params()
    return load_params(path)


def _print(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


@clean_errors  # a database that cannot be opened: one line, not a traceback
def cmd_trainer_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from worldagent.preflight import check_precision
    from worldagent.specialists.trainer import TrainerConfig, create_trainer_app

    data_dirs = [Path(d) for d in (args.data_dir or ["data"])]
    params_path = Path(args.params or "params.yaml").resolve()
    if args.profile:
        params_path = profile_params(args.profile, params_path, data_dirs[0])
    params = _params(str(params_path) if args.profile else args.params)
    spec = params.specialists.trainer
    # it trains in model.dtype: refuse a 13x slower one before serving
    check_precision(params.model, params.evaluate, params_path)
    config = TrainerConfig(
        data_dirs=data_dirs,
        params_path=params_path if params_path.is_file() else None,
        db_url=args.db_url or spec.db_url,
        max_concurrent=args.max_concurrent or spec.max_concurrent,
        token=args.token or os.environ.get("WORLDAGENT_TRAINER_TOKEN") or spec.token,
        base_model=args.base_model,
    )
    app = create_trainer_app(config)
    uvicorn.run(app, host=args.host or spec.host, port=args.port or spec.port, log_level=args.log_level)
    return EXIT_OK


def profile_params(name: str, params_path: Path, data_dir: Path) -> Path:
    """``params_path`` with profile ``name`` (``profiles/<name>.yaml`` beside it) written in, saved under
    the trainer's own folder (``<data dir>/specialists/trainer/params.<name>.yaml``) for its workers:
    params.yaml itself is left as it is."""
    from worldagent import profiles
    from worldagent.errors import InputError
    from worldagent.guard.files import read_text
    from worldagent.io import atomic_write_text

    if not params_path.is_file():
        raise InputError(f"{params_path}: --profile {name} writes a profile into a params file, and there is none")
    directory = params_path.parent / profiles.PROFILES_DIR
    canonical = profiles.canonical_name(name, directory)
    text = profiles.apply_profile(
        read_text(params_path, what="the params file"),
        profiles.read_profile(canonical, directory),
        directory / f"{canonical}.yaml",
    )
    out = data_dir.resolve() / "specialists" / "trainer" / f"params.{canonical}.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, text)
    return out


@clean_errors
def cmd_specialists_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from worldagent.specialists.api import create_app
    from worldagent.specialists.service import SpecialistsService

    params = _params(args.params)
    service = SpecialistsService.from_params(params, root=Path(args.root or "."))
    token = args.token or os.environ.get("WORLDAGENT_SPECIALISTS_TOKEN")
    uvicorn.run(create_app(service, token=token), host=args.host, port=args.port, log_level=args.log_level)
    return EXIT_OK


def _client(args: argparse.Namespace) -> Any:
    from worldagent.specialists.client import SpecialistsClient

    # `record` takes the page as its positional URL, so its service is --service
    explicit = getattr(args, "service", None) if getattr(args, "handler", None) is cmd_record else args.url
    url = explicit or os.environ.get("WORLDAGENT_SPECIALISTS_URL") or DEFAULT_SERVICE_URL
    return SpecialistsClient(url, token=os.environ.get("WORLDAGENT_SPECIALISTS_TOKEN"))


def _json_arg(text: str | None, name: str) -> Any:
    if text is None:
        return None
    try:
        return safejson.loads(text)
    except json.JSONDecodeError:
        return text  # a plain string value


def cmd_call(args: argparse.Namespace) -> int:
    from worldagent.specialists.client import SpecialistsError

    client = _client(args)
    try:
        result = args.call(client, args)
    except SpecialistsError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT if 400 <= error.status < 500 else EXIT_FAILED
    _print(result)
    return EXIT_OK


@clean_errors
def cmd_record(args: argparse.Namespace) -> int:
    """Open the page, record what the person does until they close it, post the rows as good feedback."""
    from worldagent.errors import InputError, RunError
    from worldagent.specialists.client import SpecialistsError
    from worldagent.specialists.record import record_actions, record_session
    from worldagent.storytest.runner import BrowserUnavailableError

    try:
        steps = record_session(args.url, headless=args.headless, timeout_s=args.timeout)
    except BrowserUnavailableError as error:
        raise RunError(str(error)) from None
    if not steps:
        raise InputError(f"nothing was recorded on {args.url}: no click, fill or navigation")
    try:
        result = record_actions(_client(args), agent_id=args.agent, task=args.task, steps=steps)
    except SpecialistsError as error:
        kind = InputError if 400 <= error.status < 500 else RunError
        raise kind(f"the service refused the recording: {error}") from None
    _print({"executionId": result["executionId"], "recorded": [row["output"] for row in result["feedback"]]})
    return EXIT_OK


def add_specialists_commands(commands: Any) -> None:
    trainer = commands.add_parser("trainer", help="the local trainer service for browser specialists")
    trainer_sub = trainer.add_subparsers(dest="trainer_command", required=True, metavar="COMMAND")
    serve = trainer_sub.add_parser("serve", help="serve POST /train, GET /status/{runId}, GET /health")
    serve.add_argument("--host", default=None, help="bind address (default specialists.trainer.host: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (default specialists.trainer.port: 8765)")
    serve.add_argument(
        "--data-dir", action="append", help="a directory datasetRef may point into (repeatable; default: data)"
    )
    serve.add_argument("--params", default=None, help="parameters file (default: params.yaml when present)")
    serve.add_argument(
        "--profile",
        default=None,
        help="train with this profile's values (profiles/NAME.yaml beside the params file) without changing the "
        "params file: `tiny` is the quick mode for end-to-end tests (the built-in tiny base, 6 steps: a job "
        "completes in seconds); default: the params file as it is (the real fine-tune)",
    )
    serve.add_argument(
        "--db-url", default=None, help="run-state database (default: <data-dir>/specialists/trainer/trainer.db)"
    )
    serve.add_argument("--max-concurrent", type=int, default=None, help="runs trained at once; more wait as pending")
    serve.add_argument("--base-model", default=None, help="override specialists.base_model")
    serve.add_argument(
        "--token", default=None, help="require 'Authorization: Bearer TOKEN' (or WORLDAGENT_TRAINER_TOKEN)"
    )
    serve.add_argument("--log-level", default="warning")
    serve.set_defaults(handler=cmd_trainer_serve)

    spec = commands.add_parser("specialists", help="feedback, training data, training runs and specialist models")
    sub = spec.add_subparsers(dest="specialists_command", required=True, metavar="COMMAND")
    serve = sub.add_parser("serve", help="serve the specialists API (feedback, jobs, data, training, registry)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8766)
    serve.add_argument("--params", default=None)
    serve.add_argument("--root", default=None, help="project root (default: .)")
    serve.add_argument(
        "--token", default=None, help="require 'Authorization: Bearer TOKEN' (or WORLDAGENT_SPECIALISTS_TOKEN)"
    )
    serve.add_argument("--log-level", default="warning")
    serve.set_defaults(handler=cmd_specialists_serve)

    record = sub.add_parser(
        "record", help="record mode: your clicks, fills and navigations in Chromium become good feedback"
    )
    record.add_argument("url", help="the page to start on")
    record.add_argument("--agent", required=True, help="the agent (targetId) the rows are for")
    record.add_argument("--task", required=True, help="what you are doing, as the agent would be told")
    record.add_argument("--headless", action="store_true", help="no window (scripts); default: a window for a person")
    record.add_argument("--timeout", type=float, default=None, help="stop recording after this many seconds")
    record.add_argument(
        "--service",
        default=None,
        help=f"specialists service (default $WORLDAGENT_SPECIALISTS_URL or {DEFAULT_SERVICE_URL})",
    )
    record.set_defaults(handler=cmd_record)

    def op(name: str, help: str, call: Any) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, help=help)
        parser.add_argument(
            "--url",
            default=None,
            help=f"specialists service (default $WORLDAGENT_SPECIALISTS_URL or {DEFAULT_SERVICE_URL})",
        )
        parser.set_defaults(handler=cmd_call, call=call)
        return parser

    p = op(
        "feedback-add",
        "create_feedback: post a good or bad decision",
        lambda c, a: c.create_feedback(
            targetType=a.target_type,
            targetId=a.target_id,
            executionId=a.execution_id,
            input=_json_arg(a.input, "input"),
            output=_json_arg(a.output, "output"),
            label=a.label,
            notes=a.notes,
        ),
    )
    p.add_argument("--target-type", default="agent", choices=["agent", "chat"])
    p.add_argument("--target-id", required=True)
    p.add_argument("--execution-id")
    p.add_argument("--input", required=True, help="JSON (or a plain string)")
    p.add_argument("--output", required=True, help="JSON (or a plain string)")
    p.add_argument("--label", required=True, choices=["good", "bad"])
    p.add_argument("--notes")
    p = op(
        "feedback-list",
        "list_feedback: rows of a target, newest first",
        lambda c, a: c.list_feedback(targetId=a.target_id, since=a.since, limit=a.limit),
    )
    p.add_argument("--target-id")
    p.add_argument("--since")
    p.add_argument("--limit", type=int)
    p = op(
        "job-create",
        "create_improvement_job",
        lambda c, a: c.create_improvement_job(
            name=a.name, scopeType=a.scope_type, scopeId=a.scope_id, strategy=a.strategy
        ),
    )
    p.add_argument("--name", required=True)
    p.add_argument("--scope-type", default="agent", choices=["agent", "chat"])
    p.add_argument("--scope-id", required=True)
    p.add_argument("--strategy", default="from_feedback")
    p = op("job-get", "get_improvement_job", lambda c, a: c.get_improvement_job(a.job_id))
    p.add_argument("job_id", type=int)
    p = op(
        "job-update",
        "update_improvement_job",
        lambda c, a: c.update_improvement_job(
            a.job_id,
            **{
                k: v
                for k, v in {"name": a.name, "strategy": a.strategy, "currentModelRef": a.current_model_ref}.items()
                if v is not None
            },
        ),
    )
    p.add_argument("job_id", type=int)
    p.add_argument("--name")
    p.add_argument("--strategy")
    p.add_argument("--current-model-ref")
    p = op(
        "generate-data",
        "generate_training_data for a job",
        lambda c, a: c.generate_training_data(a.job_id, strategy=a.strategy, since=a.since, limit=a.limit),
    )
    p.add_argument("job_id", type=int)
    p.add_argument("--strategy")
    p.add_argument("--since")
    p.add_argument("--limit", type=int)
    p = op(
        "trigger",
        "trigger_training on the local trainer",
        lambda c, a: c.trigger_training(a.job_id, datasetRef=a.dataset_ref),
    )
    p.add_argument("job_id", type=int)
    p.add_argument("--dataset-ref", required=True)
    p = op("status", "get_training_status (polls the trainer)", lambda c, a: c.get_training_status(a.run_id))
    p.add_argument("run_id")
    p = op(
        "register",
        "register_trained_model in the model registry",
        lambda c, a: c.register_trained_model(outputModelRef=a.output_model_ref, name=a.name, jobId=a.job_id),
    )
    p.add_argument("--output-model-ref", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--job-id", type=int, required=True)
    p = op("list-models", "list_specialist_models of an agent", lambda c, a: c.list_specialist_models(a.agent_id))
    p.add_argument("agent_id")
    p = op(
        "evaluate",
        "evaluate_model on held-out feedback rows",
        lambda c, a: c.evaluate_model(modelRef=a.model_ref, jobId=a.job_id, rows=a.rows),
    )
    p.add_argument("--model-ref", required=True)
    p.add_argument("--job-id", type=int, required=True)
    p.add_argument("--rows", default="heldout", choices=["heldout", "all"])
