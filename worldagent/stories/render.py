"""Render Plaited stories to HTML: the public entry points over the story interpreter.

`render_story` evaluates a story module (and its imports) with
`worldagent.stories.interpreter`, calls the story's template with its `args` and serialises
the result (`worldagent.stories.html_output`). Host failures (deep nesting, internal bugs)
become a `StoryRenderError`: a story never crashes its caller.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldagent.stories.errors import SourceLocation, StoryError, StoryRenderError
from worldagent.stories.interpreter import (
    MISSING,
    Interpreter,
    JsFunction,
    Module,
    ModuleState,
    relative_story_path,
)
from worldagent.stories.parse import DEFAULT_MAX_BYTES
from worldagent.stories.values import UNDEFINED, StoryConfig

DEFAULT_MAX_DEPTH = 64
DEFAULT_MAX_STEPS = 200_000
# Python frames needed per JS nesting level vary; this leaves room for the
# depth limit to trigger first. Python 3.11 does not use the C stack for
# Python-to-Python calls, so a higher limit is safe.
_PY_RECURSION_LIMIT = 12_000

__all__ = [
    "JsFunction",
    "Module",
    "RenderedStory",
    "load_module",
    "relative_story_path",
    "render_story",
    "UNDEFINED",
]


@dataclass
class RenderedStory:
    html: str
    stylesheets: list[str]
    intent: str | None
    # Every module the render evaluated (relative posix path -> source text), story file first.
    sources: dict[str, str] = field(default_factory=dict)


@contextmanager
def _stack_room() -> Iterator[None]:
    old = sys.getrecursionlimit()
    if old < _PY_RECURSION_LIMIT:
        sys.setrecursionlimit(_PY_RECURSION_LIMIT)
    try:
        yield
    finally:
        if old < _PY_RECURSION_LIMIT:
            sys.setrecursionlimit(old)


def _guarded(interp: Interpreter, rel: str, fn: Any) -> Any:
    """Run `fn` turning host failures (deep nesting, internal bugs) into StoryRenderError."""
    with _stack_room():
        try:
            return fn()
        except StoryError:
            raise
        except RecursionError:
            raise StoryRenderError("expression nesting too deep to evaluate", SourceLocation(rel, 1, 1)) from None
        except Exception as exc:  # a story must never crash the caller
            raise StoryRenderError(
                f"internal evaluator error: {type(exc).__name__}: {exc}", SourceLocation(rel, 1, 1)
            ) from exc


def _to_module(state: ModuleState) -> Module:
    return Module(state.file, dict(state.scope.vars), dict(state.exports))


def load_module(
    path: Path,
    root: Path,
    overlay: Mapping[str, str] | None = None,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Module:
    """Evaluate a module (and its imports) under `root`; overlay texts replace disk files."""
    interp = Interpreter(root, overlay, max_depth, max_steps, max_bytes)
    rel = interp.rel_path(path)
    return _guarded(interp, rel, lambda: _to_module(interp.load(rel)))


def render_story(
    story_file: Path,
    export: str,
    root: Path,
    overlay: Mapping[str, str] | None = None,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> RenderedStory:
    """Render story `export` of `story_file`: its template called with its `args`.

    Error locations use paths relative to `root`.
    """
    interp = Interpreter(root, overlay, max_depth, max_steps, max_bytes)
    rel = interp.rel_path(story_file)
    return _guarded(interp, rel, lambda: _render(interp, rel, export))


def _render(interp: Interpreter, rel: str, export: str) -> RenderedStory:
    state = interp.load(rel)
    config = state.exports.get(export, MISSING)
    if config is MISSING:
        raise StoryRenderError(f"no export named '{export}'", SourceLocation(rel, 1, 1))
    node = state.export_nodes[export]
    scope = state.scope
    if not isinstance(config, StoryConfig):
        raise interp.err(node, scope, f"export '{export}' is not a story(...)")
    template = config.get("template", UNDEFINED)
    args = config.get("args", UNDEFINED)
    if args is None or args is UNDEFINED:
        args = {}
    if not isinstance(args, dict):
        raise interp.err(node, scope, f"story '{export}' args must be an object")
    name = template.name if isinstance(template, JsFunction) and template.name not in (None, "template") else export
    result = interp.call(template, [dict(args)], node, scope, component=name)
    html = interp.render_value(result, node, scope)
    sources = {path: module.source.decode("utf-8") for path, module in interp.modules.items()}
    return RenderedStory(html, list(interp.sheets), _story_intent(config, state), sources)


def _story_intent(config: StoryConfig, state: ModuleState) -> str | None:
    meta = state.exports.get("meta")
    candidates = [config.get("intent"), config.get("description")]
    if isinstance(meta, dict):
        candidates.append(meta.get("intent"))
    return next((c for c in candidates if isinstance(c, str) and c.strip()), None)
