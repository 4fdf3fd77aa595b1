"""Speed benchmarks for the world-agent data path (figures on stdout, JSON with --json).

- story tests per second: the Python runner (render + accessibility + patterns + assertions)
  over every story of the bundled corpus, on one core (target ≥ 200/s);
- discover throughput: stories and bytes per second for the whole corpus;
- the FunctionGemma call parser on the slowest 1 MB adversarial input (target ≤ 100 ms).
"""

from __future__ import annotations

import time
from pathlib import Path

from benchmarks.common import arguments, print_json
from worldagent.stories.discover import discover_stories
from worldagent.stories.parse import clear_parse_cache
from worldagent.storytest.runner import PythonStoryRunner, reference_assertions
from worldagent.tools.bench import bench_parser

STORIES = Path("data/stories")


def bench_story_tests(rounds: int) -> dict[str, float]:
    records = discover_stories([STORIES], root=STORIES).stories
    runner = PythonStoryRunner()
    cases = [(STORIES / r.file, r.export, reference_assertions(STORIES / r.file, r.export, STORIES)) for r in records]
    runner.run(*cases[0][:2], STORIES, cases[0][2])  # warm the parse cache, as a long run would be
    start = time.perf_counter()
    for _ in range(rounds):
        for story_file, export, expected in cases:
            runner.run(story_file, export, STORIES, expected)
    elapsed = time.perf_counter() - start
    return {
        "story_tests": rounds * len(cases),
        "seconds": elapsed,
        "story_tests_per_second": rounds * len(cases) / elapsed,
    }


def bench_discover(rounds: int) -> dict[str, float]:
    files = sorted(STORIES.rglob("*"))
    size = sum(f.stat().st_size for f in files if f.is_file())
    start = time.perf_counter()
    stories = 0
    for _ in range(rounds):
        clear_parse_cache()  # measure real parsing, not the in-process tree cache
        stories += len(discover_stories([STORIES], root=STORIES).stories)
    elapsed = time.perf_counter() - start
    return {"stories_per_second": stories / elapsed, "megabytes_per_second": rounds * size / elapsed / 1e6}


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--rounds", type=int, default=5, help="passes over the corpus (default 5)")
    args = parser.parse_args()
    results = {
        "story_tests": bench_story_tests(args.rounds),
        "discover": bench_discover(args.rounds),
        "parser_1mb_adversarial_ms": bench_parser(1 << 20) * 1000,
    }
    if args.json:
        print_json(results)
        return
    print(f"story tests (python runner): {results['story_tests']['story_tests_per_second']:.0f}/s  (target >= 200/s)")
    print(
        f"discover: {results['discover']['stories_per_second']:.0f} stories/s, {results['discover']['megabytes_per_second']:.2f} MB/s"
    )
    print(
        f"call parser, slowest 1 MB adversarial input: {results['parser_1mb_adversarial_ms']:.1f} ms  (target <= 100 ms)"
    )


if __name__ == "__main__":
    main()
