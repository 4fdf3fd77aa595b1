"""Fidelity of the Python story runner against axe-core in headless Chromium, and its speed.

    python -m benchmarks.storytest_fidelity                  # fixture corpus + bundled corpus
    python -m benchmarks.storytest_fidelity --json
    python -m benchmarks.storytest_fidelity --render-rate DIR  # share of DIR's stories that render

Every story is rendered once; the same HTML (with its stylesheets) is checked by the Python
rules and by axe-core, restricted to the rules both implement (axe runs exactly those, so a
rule axe deprecates still counts). Printed:

- page-level agreement: the share of pages where both give the same verdict (no violation vs
  at least one), target >= 97%;
- per rule, at page granularity: precision (pages where Python flags the rule and axe agrees)
  and recall (pages axe flags that Python also flags), target precision >= 0.95;
- speed: seconds per story for the Python runner and for the browser runner (render + axe in a
  warm Chromium), and their ratio, target >= 20x;
- the hostile inputs of issue 12 (time and peak memory of each, in a child process).

Needs Chromium (`apt-get install chromium`); `--render-rate` does not.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from worldagent.stories.discover import discover_stories
from worldagent.stories.errors import StoryError
from worldagent.stories.render import render_story
from worldagent.storytest.a11y import RULES, check_accessibility
from worldagent.storytest.differential import RuleScore
from worldagent.storytest.runner import BrowserStoryRunner, PythonStoryRunner

FIXTURES = Path("tests/fixtures/plaited")
BUNDLED = Path("data/stories")
AGREEMENT_TARGET = 0.97
PRECISION_TARGET = 0.95
SPEED_TARGET = 20.0


@dataclass
class Page:
    corpus: str
    file: str
    export: str
    python_rules: list[str]
    axe_rules: list[str]


@dataclass
class Fidelity:
    pages: list[Page] = field(default_factory=list)
    render_errors: list[str] = field(default_factory=list)
    shared_rules: list[str] = field(default_factory=list)

    def agreement(self, corpus: str | None = None) -> float:
        pages = [p for p in self.pages if corpus in (None, p.corpus)]
        same = sum(bool(p.python_rules) == bool(p.axe_rules) for p in pages)
        return same / len(pages) if pages else 1.0

    def rule_scores(self) -> dict[str, RuleScore]:
        scores: dict[str, RuleScore] = {}
        for page in self.pages:
            python, axe = set(page.python_rules), set(page.axe_rules)
            for rule in python | axe:
                score = scores.setdefault(rule, RuleScore())
                if rule in python and rule in axe:
                    score.true_positive += 1
                elif rule in python:
                    score.false_positive += 1
                else:
                    score.false_negative += 1
        return dict(sorted(scores.items()))

    def disagreements(self) -> list[Page]:
        return [p for p in self.pages if set(p.python_rules) != set(p.axe_rules)]


def corpus_stories(root: Path) -> list[tuple[Path, str]]:
    return [(root / r.file, r.export) for r in discover_stories([root], root=root).stories]


def measure_fidelity(corpora: dict[str, Path], browser: BrowserStoryRunner) -> Fidelity:
    """Render every story of ``corpora`` once and compare the Python rules with axe-core."""
    result = Fidelity()
    shared = sorted(set(RULES) & set(browser.axe_rule_ids()))
    result.shared_rules = shared
    for corpus, root in corpora.items():
        for story_file, export in corpus_stories(root):
            rel = story_file.relative_to(root).as_posix()
            try:
                rendered = render_story(story_file, export, root)
            except StoryError as error:
                result.render_errors.append(f"{corpus}: {error}")
                continue
            python = sorted({v.rule for v in check_accessibility(rendered.html) if v.rule in shared})
            axe = sorted({v.rule for v in browser.axe_violations(rendered.html, rendered.stylesheets, shared)})
            result.pages.append(Page(corpus, rel, export, python, axe))
    return result


def seconds_per_story(run: object, cases: Sequence[tuple[Path, str, Path]]) -> float:
    start = time.perf_counter()
    for story_file, export, root in cases:
        run.run(story_file, export, root, [])  # type: ignore[attr-defined]
    return (time.perf_counter() - start) / len(cases)


def measure_speed(corpora: dict[str, Path], browser: BrowserStoryRunner) -> dict[str, float]:
    cases = [(f, e, root) for root in corpora.values() for f, e in corpus_stories(root)]
    python = PythonStoryRunner()
    seconds_per_story(python, cases[:3])  # warm the parse caches, as a long run would be
    browser.run(*cases[0][:2], cases[0][2], [])  # start Chromium outside the timing
    python_s = seconds_per_story(python, cases)
    browser_s = seconds_per_story(browser, cases)
    return {
        "stories": len(cases),
        "python_s_per_story": python_s,
        "browser_s_per_story": browser_s,
        "speedup": browser_s / python_s,
    }


# ------------------------------------------------------------------------------ render rate


def render_rate(root: Path) -> dict[str, object]:
    """Discover every story under ``root`` and render it; failures with their located reasons."""
    discovery = discover_stories([root], root=root)
    failures: list[str] = [
        str(p) for p in discovery.problems if p.kind in ("syntax", "encoding", "too-large", "symlink")
    ]
    rendered = 0
    for record in discovery.stories:
        try:
            render_story(root / record.file, record.export, root)
            rendered += 1
        except StoryError as error:
            failures.append(f"{record.export}: {error}")
    total = len(discovery.stories)
    return {"stories": total, "rendered": rendered, "rate": rendered / total if total else 0.0, "failures": failures}


# ---------------------------------------------------------------------------- hostile input

_HOSTILE_SNIPPETS = {
    "story: 2 MB string mapped 32x32 (story-test)": """
import sys, tempfile, pathlib
from worldagent.cli import main
lines = ["import { story } from 'plaited/testing'", "const s0 = 'xxxxxxxxxxxxxxxx'"]
lines += [f"const s{i} = s{i-1} + s{i-1}" for i in range(1, 18)]
lines += ["const row = [" + ", ".join(["s17"] * 32) + "]", "const grid = row.map((a) => row.map((b) => a + b))",
          "export const big = story({ intent: 'x', template: () => <p>{grid.length}</p> })"]
d = pathlib.Path(tempfile.mkdtemp()); (d / "big.stories.tsx").write_text("\\n".join(lines))
sys.exit(0 if main(["story-test", str(d), "--json"]) == 1 else 3)
""",
    "a11y: 8,000 <img> without alt": """
import sys, tempfile, pathlib
from worldagent.cli import main
f = pathlib.Path(tempfile.mkdtemp()) / "p.html"; f.write_text("<img>" * 8000)
sys.exit(0 if main(["a11y", str(f), "--json"]) == 1 else 3)
""",
    "a11y: '<div ' * 16000": """
import sys, tempfile, pathlib
from worldagent.cli import main
f = pathlib.Path(tempfile.mkdtemp()) / "p.html"; f.write_text("<div " * 16000)
sys.exit(0 if main(["a11y", str(f), "--json"]) == 0 else 3)
""",
}


def measure_hostile() -> dict[str, dict[str, float]]:
    """Wall time and peak RSS of each hostile input, each in a fresh child process."""
    out: dict[str, dict[str, float]] = {}
    for name, code in _HOSTILE_SNIPPETS.items():
        wrapper = (
            "import resource, runpy, sys\n"
            f"code = {code!r}\n"
            "try:\n    exec(compile(code, 'hostile', 'exec'), {'__name__': '__main__'})\n"
            "except SystemExit as e:\n    rc = e.code\n"
            "print('PEAK_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
            "sys.exit(rc)\n"
        )
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, timeout=120)
        elapsed = time.perf_counter() - start
        peak = next((int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("PEAK_KB")), -1)
        out[name] = {"seconds": elapsed, "peak_mb": peak / 1024, "expected_exit": float(done.returncode == 0)}
    return out


# ------------------------------------------------------------------------------------ main


def _print_fidelity(fidelity: Fidelity, corpora: Iterable[str]) -> None:
    print(f"pages compared: {len(fidelity.pages)}; render errors: {len(fidelity.render_errors)}")
    for corpus in corpora:
        print(f"page-level agreement [{corpus}]: {fidelity.agreement(corpus):.1%}")
    print(f"page-level agreement [all]: {fidelity.agreement():.1%} (target {AGREEMENT_TARGET:.0%})")
    print(f"{'rule':32} {'tp':>4} {'fp':>4} {'fn':>4} {'precision':>10} {'recall':>7}")
    for rule, score in fidelity.rule_scores().items():
        print(
            f"{rule:32} {score.true_positive:4} {score.false_positive:4} {score.false_negative:4} "
            f"{score.precision:10.2f} {score.recall:7.2f}"
        )
    for page in fidelity.disagreements():
        print(f"  differs: {page.corpus}/{page.file} {page.export}: python {page.python_rules} axe {page.axe_rules}")
    for error in fidelity.render_errors:
        print(f"  render error: {error}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--render-rate", metavar="DIR", help="only report the share of DIR's stories that render")
    parser.add_argument("--no-speed", action="store_true", help="skip the Python-vs-browser speed comparison")
    parser.add_argument("--no-hostile", action="store_true", help="skip the hostile-input time and memory checks")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.render_rate:
        rate = render_rate(Path(args.render_rate))
        if args.json:
            print(json.dumps(rate, indent=2))
        else:
            print(f"rendered {rate['rendered']}/{rate['stories']} stories ({rate['rate']:.1%})")
            for failure in rate["failures"]:  # type: ignore[attr-defined]
                print(f"  {failure}")
        return 0
    corpora = {"fixtures": FIXTURES, "bundled": BUNDLED}
    report: dict[str, object] = {}
    with BrowserStoryRunner() as browser:
        fidelity = measure_fidelity(corpora, browser)
        report["agreement"] = {c: fidelity.agreement(c) for c in corpora} | {"all": fidelity.agreement()}
        report["rules"] = {
            r: asdict(s) | {"precision": s.precision, "recall": s.recall} for r, s in fidelity.rule_scores().items()
        }
        report["disagreements"] = [asdict(p) for p in fidelity.disagreements()]
        if not args.no_speed:
            report["speed"] = measure_speed(corpora, browser)
    if not args.no_hostile:
        report["hostile"] = measure_hostile()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    _print_fidelity(fidelity, corpora)
    if "speed" in report:
        speed = report["speed"]
        print(
            f"speed over {speed['stories']} stories: python {speed['python_s_per_story'] * 1000:.1f} ms/story, "  # type: ignore[index]
            f"browser {speed['browser_s_per_story'] * 1000:.1f} ms/story, "  # type: ignore[index]
            f"ratio {speed['speedup']:.1f}x (target >= {SPEED_TARGET:.0f}x)"
        )  # type: ignore[index]
    for name, figures in report.get("hostile", {}).items():  # type: ignore[union-attr]
        print(
            f"hostile {name}: {figures['seconds']:.2f} s, peak {figures['peak_mb']:.0f} MB, "
            f"{'clear error' if figures['expected_exit'] else 'UNEXPECTED EXIT'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
