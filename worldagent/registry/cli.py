"""`worldagent models list|show|promote|rollback`: a thin layer over :mod:`worldagent.registry.api`.

Wire it into the main parser with ``add_models_commands(commands)``. The registry (SQLAlchemy) is
imported when a `models` command runs, not when the parser is built, so every other `worldagent`
command starts without it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldagent.errors import InputError, RunError

if TYPE_CHECKING:
    from worldagent.registry.api import Registry, Version

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
_SUMMARY_METRICS = ("mean_reward", "story_pass_rate", "a11y_pass_rate", "parse_rate")


def add_models_commands(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``models`` command (with list/show/promote/rollback) to an argparse subparsers object."""
    models = subparsers.add_parser("models", help="the model registry: list, show, promote and roll back versions")
    actions = models.add_subparsers(dest="models_command", required=True, metavar="ACTION")

    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
        parser.add_argument("--family", help="model family (default: params.yaml registry.family)")
        parser.add_argument(
            "--registry", metavar="URL", help="registry database URL (default: params.yaml registry.url)"
        )
        parser.add_argument(
            "--params", default="params.yaml", help="parameters file for the defaults (default: params.yaml)"
        )

    listing = actions.add_parser("list", help="every version of the family, with status, aliases and key metrics")
    common(listing)
    listing.set_defaults(handler=cmd_list)

    show = actions.add_parser("show", help="one version in full (default: the champion)")
    show.add_argument(
        "ref",
        nargs="?",
        metavar="VERSION|ALIAS",
        help="a version number (3 or v3) or an alias (default: champion)",
    )
    common(show)
    show.set_defaults(handler=cmd_show)

    promote = actions.add_parser("promote", help="make a version the champion")
    promote.add_argument("version", metavar="VERSION", help="version number (3 or v3)")
    promote.add_argument("--force", action="store_true", help="promote even a version the gate rejected")
    common(promote)
    promote.set_defaults(handler=cmd_promote)

    rollback = actions.add_parser("rollback", help="move the champion back to the version it pointed at before")
    common(rollback)
    rollback.set_defaults(handler=cmd_rollback)

    pin = actions.add_parser(
        "pin",
        help="pin the champion in the family's champion reference, so `dvc repro` compares with it",
        description="Write the registry's current champion into models/<family>/champion.json, the file the "
        "evaluate stage depends on: the next `dvc repro` re-evaluates against it (the flows do this first).",
    )
    pin.add_argument("--to", metavar="PATH", help="the reference file (default: the family's, from its stage table)")
    common(pin)
    pin.set_defaults(handler=cmd_pin)
    return models


def _defaults(args: argparse.Namespace) -> tuple[str, str]:
    """(url, family) from the flags, else from params.yaml, else the built-in defaults."""
    from worldagent.config import RegistryParams, load_params

    params = RegistryParams()
    if not (args.registry and args.family):
        path = Path(args.params)
        if path.exists():
            params = load_params(path).registry
        elif args.params != "params.yaml":
            raise InputError(f"{path}: file not found")
    return args.registry or params.url, args.family or params.family


def _parse_version(text: str) -> int:
    digits = text[1:] if text[:1] in ("v", "V") else text
    if not digits.isdigit() or int(digits) < 1:
        raise InputError(f"not a version number: {text!r} (expected 3 or v3)")
    return int(digits)


def _run(args: argparse.Namespace, action: Any) -> int:
    from worldagent.config import ParamsError
    from worldagent.registry.api import RegistryError, open_registry

    try:
        url, family = _defaults(args)
        with open_registry(url) as registry:
            return int(action(registry, family))
    except (ParamsError, InputError) as error:  # InputError: a bad URL, a corrupt database file
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except LookupError as error:
        print(f"error: {error.args[0] if error.args else error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (RegistryError, RunError) as error:  # RunError: a database that cannot be reached
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED


def _metric_summary(metrics: dict[str, Any]) -> str:
    keys = [k for k in _SUMMARY_METRICS if k in metrics] or sorted(metrics)[:3]
    return " ".join(f"{k}={metrics[k]:.3f}" if isinstance(metrics[k], float) else f"{k}={metrics[k]}" for k in keys)


def format_table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def cmd_list(args: argparse.Namespace) -> int:
    def action(registry: Registry, family: str) -> int:
        versions = registry.list_versions(family)
        if args.json:
            print(json.dumps({"family": family, "versions": [v.to_dict() for v in versions]}, ensure_ascii=False))
            return EXIT_OK
        if not versions:
            print(f"no versions of {family} in {registry.location}")
            return EXIT_OK
        rows = [
            (
                f"v{v.number}",
                v.status,
                ",".join(v.aliases) or "-",
                v.created_at.strftime("%Y-%m-%d %H:%M"),
                (v.git_revision or "-")[:10],
                _metric_summary(v.metrics) or "-",
            )
            for v in versions
        ]
        print(f"{family} ({registry.location})")
        print(format_table(rows, ("VERSION", "STATUS", "ALIASES", "CREATED (UTC)", "GIT", "METRICS")))
        return EXIT_OK

    return _run(args, action)


def _describe(version: Version) -> str:
    lines = [f"{version.family} v{version.number}"]
    data = version.to_dict()
    for key in (
        "status",
        "aliases",
        "created_at",
        "artifact_path",
        "artifact_hash",
        "dvc_hash",
        "git_revision",
        "params_hash",
        "data_hash",
        "published_uri",
        "published_revision",
    ):
        value = data[key]
        if isinstance(value, list):
            value = ", ".join(value) or "-"
        lines.append(f"  {key + ':':20} {value if value not in (None, '') else '-'}")
    if version.metrics:
        lines.append("  metrics:")
        for key in sorted(version.metrics):
            value = version.metrics[key]
            lines.append(
                f"    {key + ':':22} {value:.4f}" if isinstance(value, float) else f"    {key + ':':22} {value}"
            )
    for note in version.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def cmd_show(args: argparse.Namespace) -> int:
    def action(registry: Registry, family: str) -> int:
        from worldagent.registry.api import CHAMPION

        ref = args.ref or CHAMPION
        if ref[:1] in ("v", "V") and ref[1:].isdigit() or ref.isdigit():
            version: Version | None = registry.get_version(family, _parse_version(ref))
        else:
            version = registry.get_alias(family, ref)
            if version is None:
                print(f"error: {family} has no alias {ref!r}", file=sys.stderr)
                return EXIT_FAILED
        assert version is not None
        print(json.dumps(version.to_dict(), ensure_ascii=False) if args.json else _describe(version))
        return EXIT_OK

    return _run(args, action)


def cmd_promote(args: argparse.Namespace) -> int:
    def action(registry: Registry, family: str) -> int:
        move = registry.promote(family, _parse_version(args.version), allow_rejected=args.force)
        _print_move(args, move.family, move.version, move.previous)
        return EXIT_OK

    return _run(args, action)


def cmd_rollback(args: argparse.Namespace) -> int:
    def action(registry: Registry, family: str) -> int:
        move = registry.rollback(family)
        _print_move(args, move.family, move.version, move.previous)
        return EXIT_OK

    return _run(args, action)


def cmd_pin(args: argparse.Namespace) -> int:
    def action(registry: Registry, family: str) -> int:
        from worldagent.registry.champion import champion_reference, write_champion_reference

        target = Path(args.to) if args.to else _reference_file(Path(args.params), family)
        reference = champion_reference(registry, family)
        moved = write_champion_reference(target, reference)
        if args.json:
            print(json.dumps({**reference, "file": str(target), "changed": moved}))
        else:
            version = f"v{reference['version']}" if reference["version"] is not None else "(none)"
            print(f"{target}: {family} champion {version}{'' if moved else ' (unchanged)'}")
        return EXIT_OK

    return _run(args, action)


def _reference_file(params_path: Path, family: str) -> Path:
    """The champion reference of the stage table whose registry family is ``family``."""
    from worldagent.config import Params, load_params
    from worldagent.pipeline.families import PIPELINES

    params = load_params(params_path) if params_path.exists() else Params()
    for pipeline in PIPELINES:
        section, _, key = pipeline.registry_family.partition(".")
        if getattr(getattr(params, section), key) == family:
            return params_path.parent / pipeline.champion
    raise InputError(f"no stage table compares with the family {family!r}: name the reference file with --to")


def _print_move(args: argparse.Namespace, family: str, version: int, previous: int | None) -> None:
    from worldagent.registry.api import CHAMPION

    if args.json:
        print(json.dumps({"family": family, "alias": CHAMPION, "version": version, "previous": previous}))
    else:
        before = f"v{previous}" if previous is not None else "(none)"
        print(f"{family} {CHAMPION}: {before} -> v{version}")
