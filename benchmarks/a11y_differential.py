"""Fidelity of the Python accessibility rules (and story runner) against axe-core in headless Chromium.

    python -m benchmarks.a11y_differential --seed 1 --pages 5000
    python -m benchmarks.a11y_differential --seed 1 --pages 300 --json
    python -m benchmarks.a11y_differential --seed 7 --pages 1000 --write-corpus tests/storytest/fixtures/axe_corpus.jsonl
    python -m benchmarks.a11y_differential --pages 0 --runners   # the story corpora and both story runners' speed

Pages: every story of the bundled corpus (data/stories) and of the Plaited fixture corpus
(tests/fixtures/plaited) as rendered, then ``--pages`` seeded pages, a share
``--mutant-share`` of them one or two edits of a random rendered story, the rest random
grammar pages (``worldagent.storytest.differential``). Every page goes through the Python
checker and through axe-core (the rules both implement, as axe 4.12 runs them by default:
deprecated rules are off, "needs review" is not a violation). Printed: page-level agreement
per corpus (target >= 97%), per-rule precision and recall at page granularity (target >= 0.95
and >= 0.9 for every rule firing >= 10 times), and the per-page time of each checker (target:
Python >= 100x faster; ``--runners``: seconds per story of the Python story runner and of the
browser story runner over both story corpora, target >= 20x). Every disagreeing (rule, direction) is shrunk to a minimal page
(``--shrink`` per bucket) and triaged: a documented deliberate difference (``TRIAGE``) or a
rule to fix; the minimal pages are written to ``--out`` (JSON lines).

Needs Chromium (``apt-get install chromium``) and axe-core (the axe-playwright-python package).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import arguments, print_json
from worldagent.io import atomic_write_text, jsonl
from worldagent.stories.discover import discover_stories
from worldagent.stories.errors import StoryError
from worldagent.stories.render import render_story
from worldagent.storytest.differential import (
    AxeSession,
    PageVerdicts,
    RuleScore,
    compare,
    generate_page,
    mutate,
    python_rules,
    shrink,
)
from worldagent.storytest.runner import (
    BrowserStoryRunner,
    BrowserUnavailableError,
    PythonStoryRunner,
    find_chromium,
)

STORIES = Path("data/stories")
FIXTURES = Path("tests/fixtures/plaited")
AGREEMENT_TARGET = 0.97
PRECISION_TARGET = 0.95
RECALL_TARGET = 0.9
MIN_FIRES = 10
SPEED_TARGET = 100.0
RUNNER_SPEED_TARGET = 20.0

# Documented differences (docs/fidelity.md): (rule, direction, a piece of the minimal page, why).
# A disagreement no entry matches is a rule to fix.
TRIAGE: tuple[tuple[str, str, str, str], ...] = (
    ("label", "fp", "visuallyHidden", "stylesheets: axe passes a field whose label CSS clips; Python reads no CSS"),
    ("aria-allowed-attr", "fn", 'role="doc-', "DPUB roles: Python keeps doc-* roles, axe's non-DPUB checks drop them"),
    (
        "aria-prohibited-attr",
        "fn",
        'role="doc-',
        "DPUB roles: Python keeps doc-* roles, axe's non-DPUB checks drop them",
    ),
    ("listitem", "fp", 'role="doc-', "DPUB roles: Python keeps doc-* roles, axe's non-DPUB checks drop them"),
)


def triage(rule: str, direction: str, minimal: str) -> str:
    for r, d, needle, why in TRIAGE:
        if r == rule and d == direction and needle in minimal:
            return why
    return "to fix"


@dataclass
class Page:
    page_id: str
    kind: str  # a story corpus (bundled | fixtures) | mutant | grammar
    html: str  # what both checkers read
    styles: str = ""  # the story's stylesheets, as <style> elements (axe reads them, Python does not)


def story_pages(root: Path = STORIES, kind: str = "bundled", errors: list[str] | None = None) -> list[Page]:
    """Every story of ``root`` rendered once; a story that does not render goes to ``errors``."""
    pages: list[Page] = []
    for record in discover_stories([root], root=root).stories:
        try:
            rendered = render_story(root / record.file, record.export, root)
        except StoryError as error:
            if errors is not None:
                errors.append(f"{kind}: {error}")
            continue
        styles = "".join(f"<style>{css}</style>" for css in rendered.stylesheets)
        pages.append(Page(f"{record.file}:{record.export}", kind, rendered.html, styles))
    return pages


def story_runner_speed(pages: Sequence[Page]) -> dict[str, float]:
    """Seconds per story of the whole Python story runner and of the browser one (warm Chromium)."""
    roots = {"bundled": STORIES, "fixtures": FIXTURES}
    cases = [(roots[p.kind], *p.page_id.rsplit(":", 1)) for p in pages]
    python, seconds = PythonStoryRunner(), {}
    with BrowserStoryRunner() as browser:
        for runner in (python, browser):
            runner.run(cases[0][0] / cases[0][1], cases[0][2], cases[0][0], [])  # warm caches, start Chromium
            start = time.perf_counter()
            for root, file, export in cases:
                runner.run(root / file, export, root, [])
            seconds[runner.kind] = (time.perf_counter() - start) / len(cases)
    return {"stories": len(cases), **{f"{k}_s_per_story": v for k, v in seconds.items()}}


def seeded_pages(seed: int, count: int, stories: Sequence[Page], mutant_share: float) -> list[Page]:
    """``count`` pages from ``seed``: mutants of ``stories`` and grammar pages."""
    out: list[Page] = []
    for i in range(count):
        # one stream per page: page i depends only on (seed, i) (and, for a mutant, the stories)
        rng = random.Random(f"{seed}-{i}")
        if rng.random() < mutant_share and stories:
            base = rng.choice(stories)
            html, edits = mutate(base.html, rng, rng.randint(1, 2))
            out.append(Page(f"{seed}-{i} {base.page_id} {'+'.join(edits)}", "mutant", html, base.styles))
        else:
            out.append(Page(f"{seed}-{i}", "grammar", generate_page(rng)))
    return out


def grammar_page(page_id: str, mutant_share: float) -> str | None:
    """The grammar page ``page_id`` (``"<seed>-<i>"``) regenerated, or None if that page is a mutant."""
    rng = random.Random(page_id)
    if rng.random() < mutant_share:
        return None
    return generate_page(rng)


@dataclass
class Run:
    verdicts: list[PageVerdicts]
    python_s: float
    axe_s: float
    axe_version: str
    rules: list[str]


def check_pages(pages: Sequence[Page], axe: AxeSession) -> Run:
    start = time.perf_counter()
    python = [frozenset(python_rules(p.html)) for p in pages]
    python_s = time.perf_counter() - start
    start = time.perf_counter()
    axe_results = axe.run([p.styles + p.html for p in pages])
    axe_s = time.perf_counter() - start
    allowed = set(axe.rules)
    verdicts = [
        PageVerdicts(p.page_id, p.kind, frozenset(py & allowed), a.violations)
        for p, py, a in zip(pages, python, axe_results, strict=True)
    ]
    return Run(verdicts, python_s, axe_s, axe.version, list(axe.rules))


def shrunk_disagreements(pages: Sequence[Page], run: Run, axe: AxeSession, per_bucket: int) -> list[dict[str, object]]:
    """Up to ``per_bucket`` minimal pages per (rule, direction), each with its triage."""
    buckets: dict[tuple[str, str], int] = {}
    out: list[dict[str, object]] = []
    for page, v in zip(pages, run.verdicts, strict=True):
        for rule in sorted(v.python ^ v.axe):
            direction = "fp" if rule in v.python else "fn"
            key = (rule, direction)
            buckets[key] = buckets.get(key, 0) + 1
            if buckets[key] > per_bucket:
                continue

            def differs(
                htmls: list[str], rule: str = rule, direction: str = direction, styles: str = page.styles
            ) -> list[bool]:
                verdicts = axe.run([styles + h for h in htmls])
                res = []
                for h, a in zip(htmls, verdicts, strict=True):
                    py = rule in python_rules(h)
                    ax = rule in a.violations
                    res.append(py and not ax if direction == "fp" else ax and not py)
                return res

            minimal = shrink(page.html, differs)
            out.append(
                {
                    "rule": rule,
                    "direction": direction,
                    "page": page.page_id,
                    "minimal": minimal,
                    "triage": triage(rule, direction, minimal),
                }
            )
    for item in out:
        item["count"] = buckets[(str(item["rule"]), str(item["direction"]))]
    return out


def browser_runner_ms_per_page(pages: Sequence[Page], sample: int) -> float:
    """ms per page for axe-core as the browser story runner runs it: a fresh page per story, the
    page loaded and axe injected, every default rule but the page-level ones (warm browser)."""
    chosen = list(pages[:sample])
    with BrowserStoryRunner() as runner:
        runner.axe_violations(chosen[0].html)  # start Chromium outside the timing
        start = time.perf_counter()
        for page in chosen:
            runner.axe_violations(page.html)
        return 1000 * (time.perf_counter() - start) / len(chosen)


def rule_table(scores: dict[str, RuleScore]) -> list[str]:
    lines = [f"{'rule':26} {'fires':>5} {'tp':>5} {'fp':>4} {'fn':>4} {'precision':>9} {'recall':>6}  target"]
    for rule, s in scores.items():
        gated = s.fires >= MIN_FIRES or s.false_positive >= MIN_FIRES
        ok = s.precision >= PRECISION_TARGET and s.recall >= RECALL_TARGET
        mark = ("ok" if ok else "MISSED") if gated else "-"
        lines.append(
            f"{rule:26} {s.fires:5} {s.true_positive:5} {s.false_positive:4} {s.false_negative:4} "
            f"{s.precision:9.3f} {s.recall:6.3f}  {mark}"
        )
    return lines


def write_corpus(path: Path, pages: Sequence[Page], run: Run, seed: int, mutant_share: float) -> None:
    """The regression corpus: a header, then each page with axe's verdict (JSON lines)."""
    rows = [
        {"id": p.page_id, "kind": p.kind, "html": p.html, "axe": sorted(v.axe)}
        for p, v in zip(pages, run.verdicts, strict=True)
    ]
    header = {
        "axe": run.axe_version,
        "rules": run.rules,
        "pages": len(rows),
        "seed": seed,
        "mutant_share": mutant_share,
        "command": f"python -m benchmarks.a11y_differential --seed {seed} --pages {len(rows)} --write-corpus {path}",
    }
    atomic_write_text(path, jsonl([header, *rows]))


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pages", type=int, default=1000, help="seeded pages besides the bundled stories")
    parser.add_argument("--mutant-share", type=float, default=0.4, help="share of seeded pages that mutate a story")
    parser.add_argument("--shrink", type=int, default=2, help="minimal pages kept per (rule, direction); 0: none")
    parser.add_argument("--out", type=Path, default=None, help="write the minimal disagreeing pages here (JSONL)")
    parser.add_argument("--write-corpus", type=Path, default=None, help="write the seeded pages + axe verdicts here")
    parser.add_argument(
        "--runner-sample", type=int, default=100, help="pages timed through the browser story runner; 0: skip"
    )
    parser.add_argument("--runners", action="store_true", help="time both story runners over the story corpora")
    parser.add_argument(
        "--skip-without-browser", action="store_true", help="exit 0 with a note when Chromium is missing (make bench)"
    )
    args = parser.parse_args(argv)
    if args.skip_without_browser:
        try:
            find_chromium()
        except BrowserUnavailableError as error:
            print(f"a11y_differential skipped: {error}")
            return 0

    render_errors: list[str] = []
    bundled = story_pages(STORIES, "bundled", render_errors)
    stories = bundled + story_pages(FIXTURES, "fixtures", render_errors)
    seeded = seeded_pages(args.seed, args.pages, bundled, args.mutant_share)  # mutants of the bundled only
    with AxeSession() as axe:
        story_run = check_pages(stories, axe)
        seeded_run = check_pages(seeded, axe)
        disagreements = (
            shrunk_disagreements([*stories, *seeded], _joined(story_run, seeded_run), axe, args.shrink)
            if args.shrink
            else []
        )
    if args.write_corpus:
        write_corpus(args.write_corpus, seeded, seeded_run, args.seed, args.mutant_share)
    if args.out:
        atomic_write_text(args.out, jsonl(disagreements))

    report: dict[str, object] = {"axe": seeded_run.axe_version, "seed": args.seed, "corpora": {}}
    report["render_errors"] = render_errors
    for name, run in (("stories", story_run), ("seeded", seeded_run)):
        agreement, scores = compare(run.verdicts)
        by_kind = {
            kind: compare([v for v in run.verdicts if v.kind == kind])[0]
            for kind in sorted({v.kind for v in run.verdicts})
        }
        n = len(run.verdicts)
        report["corpora"][name] = {  # type: ignore[index]
            "pages": n,
            "failing_pages_axe": sum(bool(v.axe) for v in run.verdicts),
            "agreement": agreement,
            "agreement_by_kind": by_kind,
            "rules": {
                r: {
                    "tp": s.true_positive,
                    "fp": s.false_positive,
                    "fn": s.false_negative,
                    "precision": s.precision,
                    "recall": s.recall,
                }  # fmt: skip
                for r, s in scores.items()
            },
            "python_ms_per_page": 1000 * run.python_s / max(n, 1),
            "axe_ms_per_page": 1000 * run.axe_s / max(n, 1),
        }
    total_python = story_run.python_s + seeded_run.python_s
    total_axe = story_run.axe_s + seeded_run.axe_s
    python_ms = 1000 * total_python / (len(stories) + len(seeded))
    report["python_ms_per_page"] = python_ms
    report["speedup"] = total_axe / total_python if total_python else 0.0
    if args.runner_sample:
        runner_ms = browser_runner_ms_per_page(seeded or stories, args.runner_sample)
        report["browser_runner_ms_per_page"] = runner_ms
        report["speedup_vs_browser_runner"] = runner_ms / python_ms
    if args.runners:
        report["story_runners"] = runners = story_runner_speed(stories)
        runners["speedup"] = runners["browser_s_per_story"] / runners["python_s_per_story"]
    report["disagreements"] = disagreements
    if args.json:
        print_json(report)
        return 0
    print(f"axe-core {seeded_run.axe_version}, seed {args.seed}; rules compared: {len(seeded_run.rules)}")
    for name, run in (("stories", story_run), ("seeded", seeded_run)):
        c = report["corpora"][name]  # type: ignore[index]
        kinds = ", ".join(f"{k} {a:.1%}" for k, a in c["agreement_by_kind"].items())
        print(
            f"\n[{name}] {c['pages']} pages ({c['failing_pages_axe']} failing per axe): "
            f"page-level agreement {c['agreement']:.1%} ({kinds}; target {AGREEMENT_TARGET:.0%})"
        )
        for line in rule_table(compare(run.verdicts)[1]):
            print("  " + line)
        print(f"  speed: python {c['python_ms_per_page']:.2f} ms/page, axe {c['axe_ms_per_page']:.2f} ms/page")
    print(
        f"\nspeed: python {python_ms:.2f} ms/page; axe batched in one warm page, compared rules only: "
        f"{report['speedup']:.0f}x slower"
    )
    if args.runner_sample:
        print(
            f"axe as the browser story runner runs it (fresh page, default rules): "
            f"{report['browser_runner_ms_per_page']:.1f} ms/page, {report['speedup_vs_browser_runner']:.0f}x slower "
            f"(target >= {SPEED_TARGET:.0f}x)"
        )
    if args.runners:
        print(
            f"story runners over {runners['stories']} stories: python {runners['python_s_per_story'] * 1000:.1f} "
            f"ms/story, browser {runners['browser_s_per_story'] * 1000:.1f} ms/story, "
            f"{runners['speedup']:.0f}x (target >= {RUNNER_SPEED_TARGET:.0f}x)"
        )
    for error in render_errors:
        print(f"render error: {error}")
    if disagreements:
        print("\nminimal disagreeing pages:")
        for d in disagreements:
            print(f"  {d['rule']} {d['direction']} x{d['count']} [{d['triage']}]: {d['minimal']}")
    return 0


def _joined(a: Run, b: Run) -> Run:
    return Run(a.verdicts + b.verdicts, a.python_s + b.python_s, a.axe_s + b.axe_s, a.axe_version, a.rules)


if __name__ == "__main__":
    raise SystemExit(main())
