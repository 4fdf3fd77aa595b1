"""`worldagent`: one command-line entry point for the library's stages and checks.

Kept thin: each subcommand parses arguments, calls one library function and prints.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, sort_keys=False))


def _cmd_discover(args: argparse.Namespace) -> int:
    from worldagent.stories.discover import discover_stories
    from worldagent.stories.errors import DiscoveryError

    paths = [Path(p) for p in args.paths]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        print(f"error: no such file or directory: {', '.join(missing)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    root = Path(args.root) if args.root else _common_root(paths)
    try:
        discovery = discover_stories(paths, root=root, strict=args.strict)
    except DiscoveryError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    for problem in discovery.problems:
        print(str(problem), file=sys.stderr)
    for story in discovery.stories:
        if args.json:
            _print_json(story.model_dump(mode="json"))
        else:
            print(f"{story.file}:{story.line}:{story.col}\t{story.export}\t{story.intent}")
    return EXIT_OK


def _common_root(paths: Sequence[Path]) -> Path:
    directories = [p.resolve() if p.is_dir() else p.resolve().parent for p in paths]
    common = Path(*Path(directories[0]).parts)
    for directory in directories[1:]:
        while common not in (directory, *directory.parents):
            common = common.parent
    return common


def _cmd_story_test(args: argparse.Namespace) -> int:
    from worldagent.config import StorytestParams
    from worldagent.stories.discover import discover_stories
    from worldagent.stories.errors import StoryError
    from worldagent.storytest.runner import make_runner, reference_assertions

    story_file = Path(args.file)
    if not story_file.is_file():
        print(f"error: {story_file}: no such file", file=sys.stderr)
        return EXIT_BAD_INPUT
    root = Path(args.root) if args.root else story_file.resolve().parent
    story_file = story_file.resolve()
    discovery = discover_stories([story_file], root=root)
    for problem in discovery.problems:
        print(str(problem), file=sys.stderr)
    exports = [s.export for s in discovery.stories if args.export in (None, s.export)]
    if not exports:
        print(f"error: {args.file}: no story export{' named ' + repr(args.export) if args.export else ''}", file=sys.stderr)
        return EXIT_BAD_INPUT
    runner = make_runner(StorytestParams(runner=args.runner))
    reference = Path(args.reference).resolve() if args.reference else story_file
    reference_root = reference.parent if args.reference else root
    all_passed = True
    for export in exports:
        try:
            expected = reference_assertions(reference, export, reference_root)
        except StoryError as error:
            if args.reference:
                print(f"error: reference {error}", file=sys.stderr)
                return EXIT_BAD_INPUT
            expected = []  # the story itself does not render: the run below reports where
        result = runner.run(story_file, export, root, expected)
        all_passed &= result.passed and result.a11yPassed
        if args.json:
            _print_json({"export": export, **result.model_dump()})
        else:
            status = "PASS" if result.passed and result.a11yPassed else "FAIL"
            print(f"{status} {export}: {result.passedAssertions}/{result.totalAssertions} assertions, a11y {'ok' if result.a11yPassed else 'failed'}")
            for error in result.errors:
                print(f"  {error}")
    return EXIT_OK if all_passed else EXIT_FAILED


def _cmd_a11y(args: argparse.Namespace) -> int:
    from worldagent.storytest.a11y import check_accessibility

    path = Path(args.file)
    try:
        html = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        print(f"error: {path}: no such file", file=sys.stderr)
        return EXIT_BAD_INPUT
    except UnicodeDecodeError as error:
        print(f"error: {path}: not UTF-8 (byte {error.start})", file=sys.stderr)
        return EXIT_BAD_INPUT
    violations = check_accessibility(html)
    if args.json:
        _print_json([{"rule": v.rule, "target": v.target, "message": v.message} for v in violations])
    else:
        for v in violations:
            print(f"{v.rule}\t{v.target}\t{v.message}")
    return EXIT_OK if not violations else EXIT_FAILED


def _cmd_stage(args: argparse.Namespace) -> int:
    import importlib

    module = importlib.import_module(f"tasks.{args.command}")
    return int(module.main(["--params", args.params, "--root", args.root or "."]))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="worldagent",
        description="World-agent pipeline: discover Plaited stories, test them, and build training data.",
        epilog="Stages run reproducibly with `dvc repro`; see README.md.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    discover = commands.add_parser("discover", help="list the stories (and their intents) in TSX files or directories")
    discover.add_argument("paths", nargs="+", metavar="PATH", help="*.stories.tsx files or directories to search")
    discover.add_argument("--json", action="store_true", help="one JSON object per story (file, export, intent, ...)")
    discover.add_argument("--strict", action="store_true", help="exit 1 if any file has a problem (syntax, missing or duplicate intent)")
    discover.add_argument("--root", help="paths in the output are relative to this directory (default: common parent)")
    discover.set_defaults(handler=_cmd_discover)

    story_test = commands.add_parser("story-test", help="render a story and run its accessibility, pattern and assertion checks")
    story_test.add_argument("file", metavar="FILE", help="a *.stories.tsx file")
    story_test.add_argument("--export", help="only this story export (default: every story in the file)")
    story_test.add_argument("--reference", help="derive the assertions from this reference story file (default: FILE itself)")
    story_test.add_argument("--runner", choices=["python", "browser"], default="python", help="python (embedded) or browser (headless Chromium + axe-core)")
    story_test.add_argument("--root", help="root for relative imports (default: the file's directory)")
    story_test.add_argument("--json", action="store_true", help="one StoryResult JSON object per story")
    story_test.set_defaults(handler=_cmd_story_test)

    a11y = commands.add_parser("a11y", help="check an HTML file with the accessibility rules")
    a11y.add_argument("file", metavar="FILE.html")
    a11y.add_argument("--json", action="store_true", help="a JSON list of {rule, target, message}")
    a11y.set_defaults(handler=_cmd_a11y)

    from worldagent.registry.cli import add_models_commands

    add_models_commands(commands)

    from worldagent.intervention.cli import add_intervention_commands

    add_intervention_commands(commands)  # experience init|import|export|stats, intervention predict

    from worldagent.specialists.cli import add_specialists_commands

    add_specialists_commands(commands)  # trainer serve; specialists ... (issue 5)

    for stage, text in (("generate", "run the generate stage (trajectories and preference pairs) outside DVC"),):
        sub = commands.add_parser(stage, help=text)
        sub.add_argument("--params", default="params.yaml", help="parameters file (default: params.yaml)")
        sub.add_argument("--root", help="project root (default: current directory)")
        sub.set_defaults(handler=_cmd_stage)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    raise SystemExit(main())
