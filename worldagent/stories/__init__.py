"""TSX story discovery (tree-sitter) and JSX rendering to HTML.

See docs/CONTRACTS.md section 1 (the dialect) and section 2 (this package's API).
"""

from worldagent.stories.discover import (
    Discovery,
    Problem,
    StoryRecord,
    discover_stories,
    discovery_to_jsonl,
)
from worldagent.stories.errors import (
    DiscoveryError,
    SourceLocation,
    StoryError,
    StoryImportError,
    StoryRenderError,
    StorySyntaxError,
)
from worldagent.stories.render import Module, RenderedStory, load_module, render_story

__all__ = [
    "Discovery",
    "DiscoveryError",
    "Module",
    "Problem",
    "RenderedStory",
    "SourceLocation",
    "StoryError",
    "StoryImportError",
    "StoryRecord",
    "StoryRenderError",
    "StorySyntaxError",
    "discover_stories",
    "discovery_to_jsonl",
    "load_module",
    "render_story",
]
