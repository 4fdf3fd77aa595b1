"""`worldagent`: one command-line entry point for the library's stages and checks.

Kept thin: each subcommand parses arguments, calls one library function and prints.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldagent.errors import InputError, clean_errors

if TYPE_CHECKING:
    from worldagent.storytest.play import PlayResult

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
MAX_PAGE_BYTES = 4 * 1024 * 1024  # `worldagent a11y`: far above any rendered story page


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


def _play_result(story_file: Path, export: str, root: Path) -> PlayResult | None:
    """The story's `play` run on its page (None without one); a module that will not load for it is unchecked."""
    from worldagent.stories.errors import StoryError
    from worldagent.storytest.play import PlayResult, run_play

    try:
        return run_play(story_file, export, root)
    except StoryError as error:
        return PlayResult(0, unchecked=f"play: {error}")


def _cmd_story_test(args: argparse.Namespace) -> int:
    from worldagent.config import StorytestParams
    from worldagent.stories.discover import discover_stories
    from worldagent.stories.errors import StoryError
    from worldagent.storytest.runner import make_runner, reference_assertions

    target = Path(args.path)
    if not target.exists():
        print(f"error: {target}: no such file or directory", file=sys.stderr)
        return EXIT_BAD_INPUT
    if target.is_dir() and args.reference:
        print("error: --reference needs a single story FILE, not a directory", file=sys.stderr)
        return EXIT_BAD_INPUT
    default_root = target if target.is_dir() else target.resolve().parent
    root = Path(args.root) if args.root else default_root
    discovery = discover_stories([target], root=root)
    for problem in discovery.problems:
        print(str(problem), file=sys.stderr)
    stories = [s for s in discovery.stories if args.export in (None, s.export)]
    if not stories and not discovery.problems:
        print(
            f"error: {args.path}: no story export{' named ' + repr(args.export) if args.export else ''}",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    runner = make_runner(StorytestParams(runner=args.runner))
    reference = Path(args.reference).resolve() if args.reference else None
    counts = {"stories": len(stories), "rendered": 0, "passed": 0, "failed": 0, "errors": 0}
    if args.play:
        counts |= {"plays": 0, "plays_unchecked": 0}  # stories with a play run; those it stopped unchecked
    for record in stories:
        story_file = root / record.file
        try:
            if reference is not None:
                expected = reference_assertions(reference, record.export, reference.parent)
            else:
                expected = reference_assertions(story_file, record.export, root)
        except StoryError as error:
            if reference is not None:
                print(f"error: reference {error}", file=sys.stderr)
                return EXIT_BAD_INPUT
            expected = []  # the story itself does not render: the run below reports where
        result = runner.run(story_file, record.export, root, expected)
        render_error = not result.passed and bool(result.errors) and result.errors[0].startswith("render: ")
        play = None if render_error or not args.play else _play_result(story_file, record.export, root)
        ok = result.passed and result.a11yPassed and (play is None or play.passed)
        counts["rendered"] += not render_error
        counts["errors"] += render_error
        counts["passed"] += ok
        counts["failed"] += not ok and not render_error
        if play is not None:
            counts["plays"] += 1
            counts["plays_unchecked"] += play.unchecked is not None
        if args.json:
            _print_json(
                {
                    "file": record.file,
                    "export": record.export,
                    "rendered": not render_error,
                    **result.model_dump(),
                    **({"play": None if play is None else asdict(play)} if args.play else {}),
                }
            )
        else:
            status = "ERROR" if render_error else "PASS" if ok else "FAIL"
            print(
                f"{status} {record.file} {record.export}: {result.passedAssertions}/{result.totalAssertions} "
                f"assertions, a11y {'ok' if result.a11yPassed else 'failed'}"
            )
            for error in result.errors:
                print(f"  {error}")
            if play is not None:
                held = f"{play.asserts_passed} assert{'' if play.asserts_passed == 1 else 's'} held"
                print(f"  play: {held}; {play.verdict}")
    # Files that could not be read or parsed hold stories nobody can run: they count as errors.
    unreadable = len(
        {p.location.file for p in discovery.problems if p.kind in ("syntax", "encoding", "too-large", "symlink")}
    )
    counts["errors"] += unreadable
    if args.json:
        if target.is_dir():  # a single FILE keeps its one-object-per-story output
            _print_json({"summary": counts})
    else:
        print(
            f"{counts['stories']} stories: {counts['rendered']} rendered, {counts['passed']} passed, "
            f"{counts['failed']} failed, {counts['errors']} errors"
            + (f"; {counts['plays']} plays run, {counts['plays_unchecked']} unchecked" if args.play else "")
        )
    return EXIT_OK if counts["failed"] == 0 and counts["errors"] == 0 else EXIT_FAILED


def _cmd_a11y(args: argparse.Namespace) -> int:
    from worldagent.guard import files
    from worldagent.storytest.a11y import check_accessibility

    path = Path(args.file)
    try:
        # The file guard: a regular file under the page cap (`/dev/zero` or a FIFO is refused unread).
        html = files.read_text(path, max_bytes=MAX_PAGE_BYTES, what="an HTML page")
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    violations = check_accessibility(html)
    if args.json:
        _print_json([{"rule": v.rule, "target": v.target, "message": v.message} for v in violations])
    else:
        for v in violations:
            print(f"{v.rule}\t{v.target}\t{v.message}")
    return EXIT_OK if not violations else EXIT_FAILED


def _cmd_stage(args: argparse.Namespace) -> int:
    """A stage outside DVC, with the paths its table entry gives (relative to ``--root``)."""
    from worldagent.config import load_params
    from worldagent.pipeline.__main__ import run, stages
    from worldagent.pipeline.entry import option
    from worldagent.pipeline.table import stage_paths

    stage = stages()[args.command]
    root = Path(args.root or ".")
    paths = stage_paths(stage, root, load_params(args.params))
    argv = [part for name, path in paths.items() for part in (option(name), str(path))]
    options = [part for name, value in stage.options.items() for part in (option(name), value)]
    return run([stage.name, "--params", args.params, *options, *argv])


def _cmd_profile(args: argparse.Namespace) -> int:
    from worldagent import profiles

    params, directory = Path(args.params), Path(args.profiles)
    if args.action == "list":
        current = set(profiles.matching(params, directory))
        for name in profiles.available(directory):
            print(f"{'*' if name in current else ' '} {name}")
        return 0
    if args.action == "show":
        names = profiles.matching(params, directory)
        print(", ".join(names) if names else f"{params} matches no profile (edited by hand)")
        return 0 if names else 1
    if not args.name:
        raise InputError("worldagent profile use: name the profile (worldagent profile list shows them)")
    if note := profiles.renamed_note(args.name, directory):
        print(note)
    name = profiles.canonical_name(args.name, directory)
    changed = profiles.use_profile(name, params, directory)
    print(f"{params}: profile {name}" + (f" ({len(changed)} values changed)" if changed else " (already set)"))
    for key in changed:
        print(f"  {key}")
    if changed:
        print("next: `make pipeline` (or `dvc repro`) reruns what these values touch")
    return 0


def _cmd_preflight(args: argparse.Namespace) -> int:
    from worldagent.config import load_params
    from worldagent.pipeline.families import PIPELINES
    from worldagent.preflight import check_precision, precision_note, recorded_precisions, run_plan

    params = load_params(args.params)
    check_precision(params.model, params.evaluate, Path(args.params))
    print(f"{args.params}: this machine can run these settings")
    root = Path(args.params).resolve().parent
    note = precision_note(params.model, recorded_precisions(PIPELINES, root))
    if note:
        print(f"note: {note}")
    print(run_plan(PIPELINES, root)[2])
    return 0


def _cmd_costs(args: argparse.Namespace) -> int:
    from worldagent.pipeline.costs import (
        StepCost,
        cost_table,
        from_nothing_table,
        last_computed,
        read_ledger,
        run_summary,
    )

    if args.runs < 1:
        raise InputError(f"--runs {args.runs}: list at least 1 run")
    records = read_ledger(Path(args.ledger), args.family)
    if not records:
        raise InputError(f"{args.ledger}: no run of family {args.family!r} recorded")
    if args.from_nothing:
        families = list(dict.fromkeys(record["family"] for record in records))
        for family in families:
            print(f"{family}: each stage's cost in the last run that computed it\n")
            print(from_nothing_table(last_computed([r for r in records if r["family"] == family])) + "\n")
        return 0
    if args.json:
        print(json.dumps(records[-args.runs :], indent=1))
        return 0
    for record in records[-args.runs :]:
        print(run_summary(record))
    last = records[-1]
    print(f"\nThe last run ({last['family']}, {last['finished']}):\n")
    print(cost_table([StepCost(**step) for step in last["steps"]]))
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from worldagent.evaluation.compare_evals import compare_evaluations, load_side
    from worldagent.evaluation.metrics import LABELS

    result = compare_evaluations(
        load_side(args.a), load_side(args.b), samples=args.samples, confidence=args.confidence, seed=args.seed
    )
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return EXIT_OK
    a, b, passes = result["a"], result["b"], result["passes"]
    print(f"A: {a['file']} ({a['row']})\nB: {b['file']} ({b['row']})")
    level = f"{result['confidence']:.0%} CI"
    resamples = f"{result['bootstrap_samples']} resamples, seed {result['seed']}"
    print(f"{result['n']} intents, paired; B − A with its paired bootstrap {level} ({resamples})\n")
    print(f"{'metric':<36} {'A':>7} {'B':>7} {'B − A':>8}  {level:<18} verdict for B")
    for metric, values in result["metrics"].items():
        diff = values["diff"]
        interval = f"[{diff['low']:+.3f}, {diff['high']:+.3f}]"
        print(
            f"{LABELS[metric]:<36} {values['a']:>7.3f} {values['b']:>7.3f} {diff['mean']:>+8.3f}  {interval:<18}"
            f" {values['verdict']}"
        )
    print(
        f"\nstories passed: {len(passes['only_a'])} only by A, {len(passes['only_b'])} only by B,"
        f" {passes['both']} by both, {passes['neither']} by neither"
    )
    for side in ("a", "b"):
        for intent in passes[f"only_{side}"]:
            print(f"  only {side.upper()}: {intent}")
    return EXIT_OK


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
    discover.add_argument(
        "--strict", action="store_true", help="exit 1 if any file has a problem (syntax, missing or duplicate intent)"
    )
    discover.add_argument("--root", help="paths in the output are relative to this directory (default: common parent)")
    discover.set_defaults(handler=_cmd_discover)

    story_test = commands.add_parser(
        "story-test",
        help="render stories and run their accessibility, pattern and assertion checks",
        description="Render each story export and check it. A story PASSES when it renders, every assertion "
        "holds (the roles, names and states of the reference story's rendered accessibility tree: by "
        "default the story itself, so a story that renders passes its own; with --reference, another "
        "file's story of the same export name, as the evaluation checks an agent's answer) and the "
        "accessibility rules pass. With --play, its `play` function also runs against the rendered page, "
        "as Plaited's test runner runs it, and a failed assert fails the story; a play that fires an event "
        "or reads what a static page cannot answer stops unchecked (reported, not a failure). Exit status: "
        "0 when every story passes, 1 when one fails or does not render, 2 for bad input.",
    )
    story_test.add_argument("path", metavar="FILE|DIR", help="a *.stories.tsx file, or a folder of them")
    story_test.add_argument("--export", help="only this story export (default: every story in the file)")
    story_test.add_argument(
        "--reference", help="derive the assertions from this reference story file (default: FILE itself)"
    )
    story_test.add_argument(
        "--runner",
        choices=["python", "browser"],
        default="python",
        help="python (embedded) or browser (headless Chromium + axe-core)",
    )
    story_test.add_argument(
        "--play",
        action="store_true",
        help="also run each story's `play` asserts on its rendered page (findByAttribute, findByText, assert)",
    )
    story_test.add_argument("--root", help="root for relative imports (default: DIR, or the FILE's directory)")
    story_test.add_argument(
        "--json", action="store_true", help="one StoryResult JSON object per story, then a summary object"
    )
    story_test.set_defaults(handler=_cmd_story_test)

    a11y = commands.add_parser("a11y", help="check an HTML file with the accessibility rules")
    a11y.add_argument("file", metavar="FILE.html")
    a11y.add_argument("--json", action="store_true", help="a JSON list of {rule, target, message}")
    a11y.set_defaults(handler=_cmd_a11y)

    profile = commands.add_parser(
        "profile",
        help="switch params.yaml between named profiles (cpu: the default; gpu: the full budgets on one GPU; tiny: "
        "tests and CI)",
        description="A profile (profiles/NAME.yaml) is the set of params.yaml values that differ between "
        "profiles; `use` writes them into params.yaml, keeping its comments.",
    )
    profile.add_argument(
        "action", choices=["list", "show", "use"], help="list the profiles, show the current one, or use one"
    )
    profile.add_argument("name", nargs="?", help="the profile to use")
    profile.add_argument("--params", default="params.yaml", help="parameters file (default: params.yaml)")
    profile.add_argument("--profiles", default="profiles", help="profiles folder (default: profiles)")
    profile.set_defaults(handler=_cmd_profile)

    preflight = commands.add_parser(
        "preflight",
        help="check that this machine can run params.yaml's settings at a useful speed (make pipeline does it first)",
        description="Stops with the fix when a setting would run many times slower here than intended "
        "(model.dtype bfloat16 on a CPU without native bfloat16). `make repro` runs it before `dvc repro`. "
        "Notes, without stopping, when model.dtype trains here in another precision than the committed run "
        "recorded (its training stages will then train again, into other bytes than dvc.lock's). Then prints the "
        "run's plan: the profile params.yaml is set to, each stage's expected time (this machine's cost ledger, "
        "else the profile's measurement in profiles/measured/costs.yaml) and the total, and a note when this "
        "machine suits another profile better (CUDA present: gpu).",
    )
    preflight.add_argument("--params", default="params.yaml", help="parameters file (default: params.yaml)")
    preflight.set_defaults(handler=_cmd_preflight)

    compare = commands.add_parser(
        "compare",
        help="two evaluations of the same held-out intents, paired: B − A per metric with bootstrap CIs",
        description="Pairs two evaluations by intent (two `dvc exp` runs' outputs, or two stages of one run) and "
        "prints each metric for A and B, B − A with its paired bootstrap CI (the compare stage's), and the "
        "stories only one of them passes. A side is FILE[#ROW]: a per-model evaluation file "
        "(reports/world_agent/eval/<model>.json, its first row unless #ROW names another) or the evaluate "
        "stage's eval_intents.jsonl with the model named (eval_intents.jsonl#sft). Exit status 2 when a file is "
        "missing or malformed or the two did not evaluate the same intents.",
    )
    compare.add_argument("a", metavar="A", help="the baseline: FILE or FILE#ROW")
    compare.add_argument("b", metavar="B", help="the change: FILE or FILE#ROW")
    compare.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default: 0)")
    compare.add_argument("--samples", type=int, default=1000, help="bootstrap resamples (default: 1000)")
    compare.add_argument("--confidence", type=float, default=0.95, help="the CI's level (default: 0.95)")
    compare.add_argument("--json", action="store_true", help="the comparison as one JSON object")
    compare.set_defaults(handler=_cmd_compare)

    from worldagent.pipeline.costs import DEFAULT_LEDGER

    costs = commands.add_parser(
        "costs",
        help="what the last flow runs cost: wall time and peak memory of each stage (from the flows' ledger)",
        description="Every `make pipeline` (any flow) appends one line per family to the ledger; this lists "
        "the last runs, then the last one's table of stages: whether DVC ran each, its wall time and the "
        "peak resident memory of its largest process.",
    )
    costs.add_argument("--ledger", default=str(DEFAULT_LEDGER), help=f"the ledger (default: {DEFAULT_LEDGER})")
    costs.add_argument("--family", help="only this family's runs (world-agent, intervention, ...)")
    costs.add_argument("--runs", type=int, default=5, help="how many of the last runs to list (default: 5)")
    costs.add_argument("--json", action="store_true", help="the last runs' records as JSON")
    costs.add_argument(
        "--from-nothing",
        action="store_true",
        help="each stage's wall time and peak from the last run that computed it, summed: what the whole DAG "
        "costs from nothing, when runs recompute only what changed",
    )
    costs.set_defaults(handler=_cmd_costs)

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


@clean_errors
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    raise SystemExit(main())
