"""Story runners: render a story, check accessibility, patterns and assertions → StoryResult.

- ``PythonStoryRunner`` (the embedded default): renders with ``worldagent.stories.render`` and
  runs the Python accessibility rules, pattern rules and assertions.
- ``BrowserStoryRunner``: same rendering, patterns and assertions, but the accessibility check is
  axe-core running in headless Chromium (Playwright's sync API, Debian's ``/usr/bin/chromium``).
- ``CommandStoryRunner``: an external command that prints a StoryResult as JSON.

``make_runner(params.storytest)`` builds the one params.yaml asks for.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import ValidationError

from worldagent.config import StorytestParams
from worldagent.errors import RunError
from worldagent.storytest.a11y import (
    Violation,
    accessibility_tree,
    check_accessibility,
    format_violation,
)
from worldagent.storytest.assertions import (
    Assertion,
    check_assertions,
    derive_assertions,
    describe_assertion,
)
from worldagent.storytest.dom import Element, parse_html
from worldagent.storytest.patterns import check_patterns
from worldagent.storytest.result import StoryResult

__all__ = [
    "BrowserStoryRunner",
    "BrowserUnavailableError",
    "CHROMIUM_ARGS",
    "CommandStoryRunner",
    "PythonStoryRunner",
    "StoryRunner",
    "StoryRunnerError",
    "evaluate_html",
    "find_chromium",
    "load_axe_source",
    "make_runner",
    "reference_assertions",
]

CHROMIUM_ARGS: tuple[str, ...] = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
)
# axe rules about whole pages; a story renders a fragment, so they do not apply.
PAGE_LEVEL_AXE_RULES: tuple[str, ...] = (
    "document-title",
    "html-has-lang",
    "landmark-one-main",
    "page-has-heading-one",
    "region",
    "bypass",
)
CHROMIUM_ENV = "WORLDAGENT_CHROMIUM"


class StoryRunnerError(RunError):
    """A runner could not produce a result (misconfiguration, bad external output...)."""


class BrowserUnavailableError(StoryRunnerError):
    """No Chromium executable could be found or launched."""


@runtime_checkable
class StoryRunner(Protocol):
    def run(
        self,
        story_file: Path,
        export: str,
        root: Path,
        expected: list[Assertion] | None = None,
        overlay: Mapping[str, str] | None = None,
    ) -> StoryResult: ...


# ---------------------------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------------------------


def evaluate_html(
    html: str,
    sources: Mapping[str, str] | None = None,
    expected: Sequence[Assertion] | None = None,
    *,
    a11y_violations: Sequence[Violation] | None = None,
) -> StoryResult:
    """Score rendered ``html``: accessibility (Python rules unless ``a11y_violations`` is given),
    patterns (html and ``sources``) and ``expected`` assertions."""
    root: Element = parse_html(html)
    a11y = list(a11y_violations) if a11y_violations is not None else check_accessibility(root)
    patterns = check_patterns(root, sources or {})
    expected = list(expected or [])
    checks = check_assertions(expected, accessibility_tree(root)) if expected else []
    errors = [format_violation(v) for v in a11y]
    errors += [format_violation(v) for v in patterns]
    errors += [
        f"assertion: expected {describe_assertion(a)} was not found"
        for a, ok in zip(expected, checks, strict=False)
        if not ok
    ]
    return StoryResult(
        passed=not patterns and all(checks),
        totalAssertions=len(expected),
        passedAssertions=sum(checks),
        a11yPassed=not a11y,
        errors=errors,
    )


def _load_render() -> Any:
    """``worldagent.stories.render.render_story``, imported lazily."""
    try:
        from worldagent.stories.render import render_story
    except ImportError as exc:
        raise StoryRunnerError(f"the story renderer worldagent.stories.render is not importable: {exc}") from exc
    return render_story


def _render(story_file: Path, export: str, root: Path, overlay: Mapping[str, str] | None) -> Any:
    return _load_render()(Path(story_file), export, Path(root), overlay)


@dataclass(frozen=True)
class RenderLimits:
    """Bounds on one render (``storytest.max_component_depth`` / ``max_steps`` in params)."""

    max_depth: int = 64
    max_steps: int = 200_000


def _render_or_error(
    story_file: Path, export: str, root: Path, overlay: Mapping[str, str] | None, limits: RenderLimits = RenderLimits()
) -> tuple[Any, str | None]:
    render_story = _load_render()
    try:
        return render_story(
            Path(story_file), export, Path(root), overlay, max_depth=limits.max_depth, max_steps=limits.max_steps
        ), None
    except Exception as exc:  # any render failure is a failed story, never a crash
        try:
            from worldagent.stories.errors import StoryError
        except ImportError:  # pragma: no cover
            StoryError = ()  # type: ignore[assignment,misc]
        if isinstance(exc, StoryError):
            return None, f"render: {exc}"
        return None, f"render: internal error {type(exc).__name__}: {exc}"


def reference_assertions(
    story_file: Path, export: str, root: Path, overlay: Mapping[str, str] | None = None
) -> list[Assertion]:
    """Render the reference story and derive its assertions (render errors propagate)."""
    rendered = _render(story_file, export, root, overlay)
    return derive_assertions(accessibility_tree(rendered.html))


# ---------------------------------------------------------------------------------------------
# Python runner
# ---------------------------------------------------------------------------------------------


class PythonStoryRunner:
    """Render in Python and check with the Python rules. Never raises for a bad story."""

    kind = "python"

    def __init__(self, limits: RenderLimits = RenderLimits()) -> None:
        self.limits = limits

    def run(
        self,
        story_file: Path,
        export: str,
        root: Path,
        expected: list[Assertion] | None = None,
        overlay: Mapping[str, str] | None = None,
    ) -> StoryResult:
        rendered, error = _render_or_error(story_file, export, root, overlay, self.limits)
        if error is not None:
            return StoryResult.failure(error, len(expected or []))
        return evaluate_html(rendered.html, rendered.sources, expected)


# ---------------------------------------------------------------------------------------------
# Browser runner
# ---------------------------------------------------------------------------------------------


def find_chromium(explicit: str | os.PathLike[str] | None = None) -> str:
    """The Chromium executable: ``explicit``, ``$WORLDAGENT_CHROMIUM``, then ``chromium`` /
    ``chromium-browser`` on PATH, then ``/usr/bin/chromium``."""
    candidates: list[str] = []
    if explicit:
        candidates.append(os.fspath(explicit))
    elif os.environ.get(CHROMIUM_ENV):
        candidates.append(os.environ[CHROMIUM_ENV])
    else:
        for name in ("chromium", "chromium-browser"):
            found = shutil.which(name)
            if found:
                candidates.append(found)
        candidates.append("/usr/bin/chromium")
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    where = ", ".join(candidates)
    raise BrowserUnavailableError(
        f"Chromium not found (looked at: {where}). Install it with `apt-get install chromium`, "
        f"or pass chromium_path= / set ${CHROMIUM_ENV} to its executable."
    )


def load_axe_source() -> str:
    """axe-core's ``axe.min.js`` as shipped by the axe-playwright-python package."""
    try:
        return (resources.files("axe_playwright_python") / "axe.min.js").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise StoryRunnerError(
            "axe-core not available: install the axe-playwright-python package "
            "(it ships axe_playwright_python/axe.min.js)"
        ) from exc


def _page_document(html: str, stylesheets: Sequence[str] = ()) -> str:
    styles = "".join(f"<style>{css}</style>" for css in stylesheets)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>story</title>'
        f"{styles}</head><body>{html}</body></html>"
    )


def _axe_target(target: Any) -> str:
    if isinstance(target, list):
        return " ".join(_axe_target(t) for t in target)
    return str(target)


class BrowserStoryRunner:
    """Headless Chromium + axe-core for accessibility; Python patterns and assertions.

    The browser starts on first use and is reused; call ``close()`` (or use ``with``) to stop
    it. Playwright's sync API refuses to run inside an asyncio loop (Jupyter, Prefect, async
    services), so every browser call runs on one dedicated worker thread that has no loop.
    """

    kind = "browser"

    def __init__(
        self,
        chromium_path: str | os.PathLike[str] | None = None,
        *,
        timeout_ms: int = 30_000,
        disabled_rules: Sequence[str] = PAGE_LEVEL_AXE_RULES,
        extra_args: Sequence[str] = (),
        limits: RenderLimits = RenderLimits(),
    ) -> None:
        self.limits = limits
        self.chromium_path = chromium_path
        self.timeout_ms = timeout_ms
        self.disabled_rules = tuple(disabled_rules)
        self.extra_args = tuple(extra_args)
        self._pw: Any = None
        self._browser: Any = None
        self._axe: str | None = None
        self._worker: ThreadPoolExecutor | None = None

    def _on_worker(self, function: Any, *args: Any) -> Any:
        # Playwright objects belong to the thread that created them: always the same one.
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chromium")
        return self._worker.submit(function, *args).result()

    # -- lifecycle --------------------------------------------------------------------------
    def _ensure_browser(self) -> Any:
        if self._browser is not None:
            return self._browser
        executable = find_chromium(self.chromium_path)
        self._axe = load_axe_source()
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        try:
            self._browser = self._pw.chromium.launch(
                executable_path=executable,
                headless=True,
                args=[*CHROMIUM_ARGS, *self.extra_args],
                timeout=self.timeout_ms,
            )
        except PlaywrightError as exc:
            self._pw.stop()
            self._pw = None
            raise BrowserUnavailableError(
                f"could not launch Chromium at {executable}: {exc}. Install it with "
                "`apt-get install chromium` or set chromium_path / $WORLDAGENT_CHROMIUM."
            ) from exc
        return self._browser

    def close(self) -> None:
        if self._worker is None:
            return
        try:
            self._on_worker(self._close_in_worker)
        finally:
            self._worker.shutdown(wait=True)
            self._worker = None

    def _close_in_worker(self) -> None:
        if self._browser is not None:
            try:
                self._browser.close()
            finally:
                self._browser = None
        if self._pw is not None:
            try:
                self._pw.stop()
            finally:
                self._pw = None

    def __enter__(self) -> BrowserStoryRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- axe ----------------------------------------------------------------------------------
    def axe_violations(
        self, html: str, stylesheets: Sequence[str] = (), only_rules: Sequence[str] | None = None
    ) -> list[Violation]:
        """Run axe-core on ``html`` (a fragment, placed in a minimal page) in Chromium.

        ``only_rules`` runs exactly those axe rules (deprecated ones included), for comparisons.
        """
        return self._on_worker(self._axe_violations_in_worker, html, stylesheets, only_rules)

    def axe_rule_ids(self) -> list[str]:
        """Every rule id this axe-core build knows."""
        return self._on_worker(self._axe_rule_ids_in_worker)

    def _axe_rule_ids_in_worker(self) -> list[str]:
        page = self._ensure_browser().new_page()
        try:
            page.set_content(_page_document(""), wait_until="load")
            page.add_script_tag(content=self._axe)
            return [str(r) for r in page.evaluate("() => axe.getRules().map((r) => r.ruleId)")]
        finally:
            page.close()

    def _axe_violations_in_worker(
        self, html: str, stylesheets: Sequence[str], only_rules: Sequence[str] | None = None
    ) -> list[Violation]:
        browser = self._ensure_browser()
        page = browser.new_page()
        try:
            page.set_default_timeout(self.timeout_ms)
            page.set_content(_page_document(html, stylesheets), wait_until="load")
            page.add_script_tag(content=self._axe)
            options: dict[str, Any] = {"resultTypes": ["violations"]}
            if only_rules is not None:
                options["runOnly"] = {"type": "rule", "values": list(only_rules)}
            else:
                options["rules"] = {rule: {"enabled": False} for rule in self.disabled_rules}
            raw = page.evaluate("async (options) => await axe.run(document, options)", options)
        finally:
            page.close()
        out: list[Violation] = []
        for v in raw.get("violations", []):
            for node in v.get("nodes", []):
                out.append(
                    Violation(
                        str(v.get("id")),
                        _axe_target(node.get("target", [])),
                        str(v.get("help") or v.get("description") or ""),
                    )
                )
        return out

    def run(
        self,
        story_file: Path,
        export: str,
        root: Path,
        expected: list[Assertion] | None = None,
        overlay: Mapping[str, str] | None = None,
    ) -> StoryResult:
        rendered, error = _render_or_error(story_file, export, root, overlay, self.limits)
        if error is not None:
            return StoryResult.failure(error, len(expected or []))
        a11y = self.axe_violations(rendered.html, list(getattr(rendered, "stylesheets", []) or []))
        return evaluate_html(rendered.html, rendered.sources, expected, a11y_violations=a11y)


# ---------------------------------------------------------------------------------------------
# Command runner
# ---------------------------------------------------------------------------------------------


class CommandStoryRunner:
    """Run an external command that prints a StoryResult as JSON on stdout.

    ``cmd`` is an argv list or a shell-style string. ``{story_file}``, ``{export}`` and
    ``{root}`` placeholders in it are substituted; without any, the story file and export are
    appended as two arguments. The command runs in ``root`` and receives on stdin a JSON object
    ``{"storyFile", "export", "root", "expected": [assertions], "overlay": {path: text}}``.
    """

    kind = "command"

    def __init__(
        self,
        cmd: str | Sequence[str],
        *,
        timeout_s: float = 120.0,
        env: Mapping[str, str] | None = None,
    ) -> None:
        argv = shlex.split(cmd) if isinstance(cmd, str) else [str(c) for c in cmd]
        if not argv:
            raise StoryRunnerError("CommandStoryRunner needs a non-empty command")
        self.argv = argv
        self.timeout_s = timeout_s
        self.env = dict(env) if env is not None else None

    def _command(self, story_file: Path, export: str, root: Path) -> list[str]:
        values = {"story_file": str(story_file), "export": export, "root": str(root)}
        if any(f"{{{k}}}" in a for a in self.argv for k in values):
            out = []
            for a in self.argv:
                for k, v in values.items():
                    a = a.replace(f"{{{k}}}", v)
                out.append(a)
            return out
        return [*self.argv, str(story_file), export]

    def run(
        self,
        story_file: Path,
        export: str,
        root: Path,
        expected: list[Assertion] | None = None,
        overlay: Mapping[str, str] | None = None,
    ) -> StoryResult:
        argv = self._command(story_file, export, root)
        payload = json.dumps(
            {
                "storyFile": str(story_file),
                "export": export,
                "root": str(root),
                "expected": [a.model_dump() for a in expected or []],
                "overlay": dict(overlay or {}),
            }
        )
        env = {**os.environ, **self.env} if self.env is not None else None
        shown = shlex.join(argv)
        try:
            proc = subprocess.run(
                argv,
                input=payload,
                capture_output=True,
                text=True,
                cwd=str(root),
                timeout=self.timeout_s,
                env=env,
                check=False,
            )
        except FileNotFoundError as exc:
            raise StoryRunnerError(f"story command not found: {shown} ({exc})") from exc
        except subprocess.TimeoutExpired as exc:
            raise StoryRunnerError(f"story command timed out after {self.timeout_s}s: {shown}") from exc
        stdout = proc.stdout.strip()
        stderr_tail = proc.stderr.strip()[-500:]
        try:
            data = json.loads(stdout)
        except json.JSONDecodeError as exc:
            raise StoryRunnerError(
                f"story command {shown} (exit {proc.returncode}) did not print StoryResult JSON on "
                f"stdout: {exc.msg} at char {exc.pos}; stdout starts {stdout[:200]!r}; "
                f"stderr ends {stderr_tail!r}"
            ) from exc
        try:
            return StoryResult.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in exc.errors())
            raise StoryRunnerError(
                f"story command {shown} (exit {proc.returncode}) printed JSON that is not a "
                f"StoryResult {{passed, totalAssertions, passedAssertions, a11yPassed, errors}}: "
                f"{problems}"
            ) from exc


# ---------------------------------------------------------------------------------------------
# Factory
# ---------------------------------------------------------------------------------------------


def make_runner(params: StorytestParams | str = "python") -> StoryRunner:
    """The runner ``storytest`` in params.yaml asks for (or just a kind: python, browser)."""
    if isinstance(params, str):
        params = StorytestParams(runner=params)  # type: ignore[arg-type]
    limits = RenderLimits(max_depth=params.max_component_depth, max_steps=params.max_steps)
    if params.runner == "python":
        return PythonStoryRunner(limits)
    if params.runner == "browser":
        return BrowserStoryRunner(params.chromium_path, limits=limits)
    assert params.command is not None  # StorytestParams validates this
    return CommandStoryRunner(params.command)
