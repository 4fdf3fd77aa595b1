"""`worldagent experience init|import|export|stats` and `worldagent intervention predict` (thin)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from worldagent import safejson

DEFAULT_STORE = "sqlite:///data/experience/experience.db"
MAX_STATE_BYTES = 64 * 1024 * 1024  # `intervention predict`: states with inline screenshots fit
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def _print(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def _experience(args: argparse.Namespace) -> int:
    from worldagent.intervention.importer import ImportError_, export_logs, import_logs
    from worldagent.intervention.store import StoreError, open_store

    try:
        store = open_store(args.url, create=args.action in ("init", "import"))
    except StoreError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        if args.action == "init":
            _print({"store": args.url, **store.stats()})
        elif args.action == "import":
            _print(import_logs(store, Path(args.directory)))
        elif args.action == "export":
            _print(export_logs(store, Path(args.directory)))
        else:
            stats = store.stats()
            if args.json:
                _print(stats)
            else:
                print(
                    f"{stats['tasks']} tasks, {stats['steps']} steps ({stats['steps_without_screenshot']} without screenshot); intervention rate {stats['intervention_rate']:.1%}"
                )
                for key in ("by_status", "by_category", "interventions_by_reason"):
                    print(f"  {key}: " + ", ".join(f"{k} {v}" for k, v in stats[key].items()))
    except (StoreError, ImportError_, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        store.close()
    return EXIT_OK


def _predict(args: argparse.Namespace) -> int:
    from worldagent.config import ParamsError, load_params
    from worldagent.errors import InputError
    from worldagent.guard import files
    from worldagent.guard.text import check_value, decode_utf8
    from worldagent.intervention.clip import ClipError, ScreenshotError
    from worldagent.intervention.dataset import DatasetError
    from worldagent.intervention.serve import BundleError, InterventionPredictor

    try:
        if args.state == "-":
            data = sys.stdin.buffer.read(MAX_STATE_BYTES + 1)
            if len(data) > MAX_STATE_BYTES:
                raise files.FileError(f"stdin: more than {MAX_STATE_BYTES} bytes of state")
            text = decode_utf8(data, "stdin")
        else:  # the file guard: a regular file under the cap
            text = files.read_text(args.state, max_bytes=MAX_STATE_BYTES, what="the state JSON")
        states = check_value(safejson.loads(text), args.state)
    except json.JSONDecodeError as error:
        print(f"error: {args.state}:{error.lineno}:{error.colno}: invalid JSON: {error.msg}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except InputError as error:  # not a regular file, too large, not UTF-8, a lone surrogate
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    single = isinstance(states, dict)
    states = [states] if single else states
    if not isinstance(states, list):
        print(f"error: {args.state}: expected a state object or a list of them", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.screenshot:
        for state in states:
            state["screenshot"] = args.screenshot
    import torch

    torch.set_num_threads(args.threads)
    try:
        params = load_params(args.params) if Path(args.params).is_file() else None
        registry_url = params.registry.url if params else "sqlite:///models/registry.db"
        family = params.intervention.family if params else "intervention-predictor"
        predictor = InterventionPredictor.load(
            args.model, registry_url=registry_url, family=family, root=Path(args.root)
        )
        if args.strict:
            predictor.on_bad_screenshot = "error"
        results = predictor.predict_batch(states)
    except (ParamsError, BundleError, ClipError, ScreenshotError, DatasetError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    _print(results[0] if single else results)
    return EXIT_OK


def add_intervention_commands(commands: Any) -> None:
    exp = commands.add_parser(
        "experience",
        help="the experience store of browser-agent runs (tasks, steps, interventions)",
        description="Manage the experience store: SQLite by default, any SQLAlchemy URL with --url. "
        "Set intervention.store_url in params.yaml to this store to train on it (the default trains on the simulator's store).",
    )
    exp_cmds = exp.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, text in (
        ("init", "create the store's tables (idempotent) and print its counts"),
        ("import", "import logs in the reference shape: DIR/interventions.json, successes.json, manifest.json"),
        (
            "export",
            "write the store as DIR/interventions.json, successes.json, manifest.json (the importer reads them back)",
        ),
        ("stats", "tasks, steps, statuses, categories and intervention reasons"),
    ):
        sub = exp_cmds.add_parser(name, help=text, description=text)
        if name in ("import", "export"):
            sub.add_argument("directory", metavar="DIR", help="folder of the JSON logs")
        sub.add_argument("--url", default=DEFAULT_STORE, help=f"SQLAlchemy URL of the store (default: {DEFAULT_STORE})")
        if name == "stats":
            sub.add_argument("--json", action="store_true", help="print the counts as JSON")
        sub.set_defaults(handler=_experience)

    iv = commands.add_parser(
        "intervention", help="the intervention predictor: will the agent need a human at this step?"
    )
    iv_cmds = iv.add_subparsers(dest="action", required=True, metavar="ACTION")
    predict = iv_cmds.add_parser(
        "predict",
        help="predict from a state JSON (one object, or a list for a batch)",
        description='A state is {"actions": [{"action": "click", "target": "#buy", "success": true}, ...], '
        '"page_state": {"url": ..., "title": ..., "state": {"scroll_y": ..., "scroll_height": ..., "viewport_width": ..., '
        '"viewport_height": ..., "interactive_elements": ..., "accessibility_summary": ...}}, "screenshot": "shot.png", '
        '"step": 3, "max_steps": 16}. Prints {probability, needs_human, threshold, warnings}; fallbacks are listed in warnings.',
    )
    predict.add_argument("state", metavar="STATE.json", help="the state file ('-' reads standard input)")
    predict.add_argument(
        "--model",
        default="champion",
        help="a bundle directory or a registry reference: champion (default), v3, FAMILY@champion",
    )
    predict.add_argument("--screenshot", help="use this screenshot for every state")
    predict.add_argument(
        "--strict",
        action="store_true",
        help="a missing or unreadable screenshot is an error instead of the documented fallback",
    )
    predict.add_argument(
        "--params",
        default="params.yaml",
        help="where registry.url and intervention.family are read (default: params.yaml)",
    )
    predict.add_argument("--root", default=".", help="project root that registry paths are relative to")
    predict.add_argument("--threads", type=int, default=1, help="torch threads (default 1: fastest for a few states)")
    predict.set_defaults(handler=_predict)
