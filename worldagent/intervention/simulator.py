"""The embedded default data: a deterministic generator of browser-agent episodes.

Each episode is an e-commerce, research or information task. Most steps look ordinary; in an
intervention episode the need for a human arises from a cause that is visible in the data:

- ``agent_stuck``: the agent clicks the same element again and again, the page does not change;
- ``repeated_failures``: clicks fail (and an error toast shows in the screenshot);
- ``blocking_overlay``: a modal overlay darkens the page (mostly visible only in the screenshot);
- ``login_wall`` / ``captcha``: a sign-in form or a challenge grid fills the screenshot;
- ``max_steps``: ordinary-looking steps until the step budget runs out.

Decoys (a cookie banner, a benign failed click, a repeated scroll) appear in successful episodes
too, so no single cue is a perfect tell. Same seed and parameters → the same episodes and PNG bytes.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field
from typing import Any

from PIL import Image, ImageDraw

TROUBLE_STEPS = 4  # the visible trouble lasts this many steps; label_horizon 3 marks exactly those
CAUSES: tuple[str, ...] = ("agent_stuck", "repeated_failures", "blocking_overlay", "login_wall", "captcha", "max_steps")
SITES: dict[str, dict[str, Any]] = {
    "ecommerce": {
        "host": "https://shop.example",
        "colour": (230, 126, 34),
        "goals": ["buy a {x}", "find the cheapest {x}", "add a {x} to the basket", "compare two {x} models"],
        "things": ["desk lamp", "kettle", "backpack", "monitor", "running shoe", "coffee grinder"],
        "pages": ["/", "/search", "/product", "/basket", "/checkout"],
        "targets": [
            "#search",
            "button.search",
            "a.result",
            "button.add-to-cart",
            "a.basket",
            "button.checkout",
            "select.size",
            "a.next-page",
        ],
    },
    "research": {
        "host": "https://papers.example",
        "colour": (41, 128, 185),
        "goals": ["find papers on {x}", "download the newest paper about {x}", "cite a survey of {x}"],
        "things": [
            "contrastive learning",
            "graph neural networks",
            "protein folding",
            "speech recognition",
            "robot grasping",
        ],
        "pages": ["/", "/search", "/abs", "/pdf", "/authors"],
        "targets": ["#query", "button.go", "a.title", "a.pdf", "a.cite", "button.filter", "a.next", "input.year"],
    },
    "information": {
        "host": "https://wiki.example",
        "colour": (39, 174, 96),
        "goals": ["look up the population of {x}", "find when {x} was founded", "summarise the history of {x}"],
        "things": ["Lisbon", "Osaka", "Nairobi", "Quebec", "Tallinn", "Cusco"],
        "pages": ["/", "/wiki", "/search", "/history", "/talk"],
        "targets": [
            "#searchInput",
            "button.search",
            "a.article",
            "a.section",
            "button.expand",
            "a.reference",
            "a.lang",
        ],
    },
}


@dataclass
class SimStep:
    action: str
    target: str
    success: bool
    page: dict[str, Any]  # the page state before the action, reference layout
    scene: dict[str, Any]  # what the screenshot shows
    label_cause: str | None = None  # the trouble this step belongs to (None: ordinary)


@dataclass
class Episode:
    session_id: str
    category: str
    goal: str
    start_url: str
    max_steps: int
    status: str
    cause: str | None
    steps: list[SimStep] = field(default_factory=list)


def _page(site: dict[str, Any], path: str, scroll_y: int, summary: str, interactive: int) -> dict[str, Any]:
    title = path.strip("/").replace("/", " ").title() or "Home"
    return {
        "url": site["host"] + path,
        "title": f"{title} - {site['host'].split('//')[1]}",
        "state": {
            "scroll_y": scroll_y,
            "scroll_height": 2400 + 400 * (len(path) % 3),
            "viewport_width": 1280,
            "viewport_height": 800,
            "interactive_elements": interactive,
            "accessibility_summary": summary,
        },
    }


def _ordinary_step(
    rng: random.Random, site: dict[str, Any], k: int, scroll: int, decoy: str | None
) -> tuple[SimStep, int]:
    action = rng.choices(["click", "type", "scroll", "navigate", "select", "wait"], weights=[5, 2, 2, 1, 1, 0.5])[0]
    target = (
        rng.choice(site["targets"])
        if action not in ("scroll", "wait", "navigate")
        else (
            "window"
            if action == "scroll"
            else (site["host"] + rng.choice(site["pages"]) if action == "navigate" else "")
        )
    )
    if action == "scroll":
        scroll = min(scroll + rng.choice([300, 400, 600]), 2000)
    elif action in ("navigate", "click") and rng.random() < 0.5:
        scroll = 0
    path = site["pages"][min(k // 2, len(site["pages"]) - 1)]
    success = not (decoy == "failed_click" and action == "click" and rng.random() < 0.5)
    interactive = rng.randint(14, 60)
    summary = f'searchbox "Search"; link "{path.strip("/") or "home"}"; button "Go"'
    scene = {
        "path": path,
        "scroll": scroll,
        "highlight": rng.randint(0, 5),
        "cookie": decoy == "cookie",
        "toast": not success,
        "overlay": False,
        "login": False,
        "captcha": False,
    }
    return SimStep(action, target, success, _page(site, path, scroll, summary, interactive), scene), scroll


def _trouble_step(
    rng: random.Random, site: dict[str, Any], cause: str, j: int, k: int, scroll: int, stuck_target: str
) -> SimStep:
    path = site["pages"][min(k // 2, len(site["pages"]) - 1)]
    interactive = rng.randint(14, 60)
    summary = f'searchbox "Search"; link "{path.strip("/") or "home"}"; button "Go"'
    scene = {
        "path": path,
        "scroll": scroll,
        "highlight": rng.randint(0, 5),
        "cookie": False,
        "toast": False,
        "overlay": False,
        "login": False,
        "captcha": False,
    }
    action, target, success = "click", rng.choice(site["targets"]), True
    if cause == "agent_stuck":
        target = stuck_target
        scene["highlight"] = 2
    elif cause == "repeated_failures":
        success = rng.random() < 0.15
        scene["toast"] = not success
    elif cause == "blocking_overlay":
        scene["overlay"] = True
        success = rng.random() < 0.5
        interactive = rng.randint(8, 60)
        if rng.random() < 0.2:
            summary += " | dialog open"
    elif cause == "login_wall":
        scene["login"] = True
        if rng.random() < 0.3:
            path = "/login"
        interactive = rng.randint(4, 40)
        if rng.random() < 0.35:
            summary = 'textbox "Email"; textbox "Password"; button "Sign in"'
        action = rng.choice(["click", "type", "click"])
        success = rng.random() < 0.6
    elif cause == "captcha":
        scene["captcha"] = True
        interactive = rng.randint(6, 40)
        if rng.random() < 0.25:
            summary = 'iframe "challenge"; checkbox "I am not a robot"'
        success = rng.random() < 0.5
    elif cause == "max_steps":
        action = rng.choices(["click", "type", "scroll", "navigate"], weights=[5, 2, 2, 1])[0]
        target = (
            rng.choice(site["targets"])
            if action in ("click", "type")
            else ("window" if action == "scroll" else site["host"] + rng.choice(site["pages"]))
        )
    scene["path"] = path
    page = _page(site, path, scroll, summary, interactive)
    return SimStep(action, target, success, page, scene, label_cause=cause)


def simulate_episode(seed: int, index: int, category: str, intervention: bool, max_steps: int) -> Episode:
    rng = random.Random(f"{seed}:{index}:episode")
    site = SITES[category]
    goal = rng.choice(site["goals"]).format(x=rng.choice(site["things"]))
    cause = rng.choice(CAUSES) if intervention else None
    decoy = rng.choice([None, None, "cookie", "failed_click", "scroll"])
    trouble = TROUBLE_STEPS if cause else 0
    if cause == "max_steps":
        prefix = max_steps - trouble
    elif cause:
        prefix = rng.randint(2, max_steps - trouble - 1)
    else:
        prefix = rng.randint(4, max_steps - 4)
    episode = Episode(
        session_id=f"sim-{index:05d}",
        category=category,
        goal=goal,
        start_url=site["host"] + "/",
        max_steps=max_steps,
        status="intervention" if cause else "complete",
        cause=cause,
    )
    scroll = 0
    for k in range(prefix):
        step, scroll = _ordinary_step(rng, site, k, scroll, decoy)
        if decoy == "scroll" and k >= prefix - 3:
            step.action, step.target = "scroll", "window"
        episode.steps.append(step)
    stuck_target = rng.choice(site["targets"])
    for j in range(trouble):
        episode.steps.append(_trouble_step(rng, site, cause or "", j, prefix + j, scroll, stuck_target))
    return episode


def plan_episodes(
    episodes: int, intervention_fraction: float, categories: list[str], seed: int
) -> list[tuple[int, str, bool]]:
    """(index, category, ends in intervention) for every episode: exact balance, deterministic order."""
    n_int = round(episodes * intervention_fraction)
    flags = [True] * n_int + [False] * (episodes - n_int)
    random.Random(f"{seed}:plan").shuffle(flags)
    return [(i, categories[i % len(categories)], flags[i]) for i in range(episodes)]


def _rect(d: ImageDraw.ImageDraw, xy: list[int], **kwargs: Any) -> None:
    """A rectangle with its corners put in order, so tiny test images never invert one."""
    x0, y0, x1, y1 = xy
    d.rectangle([min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)], **kwargs)


def render_screenshot(scene: dict[str, Any], category: str, width: int, height: int, seed_key: str) -> bytes:
    """A PNG of the page as the agent saw it (header, content, highlighted element, overlays)."""
    rng = random.Random(seed_key)
    site = SITES[category]
    img = Image.new("RGB", (width, height), (250, 250, 250))
    d = ImageDraw.Draw(img)
    header = max(8, height // 10)
    _rect(d, [0, 0, width, header], fill=site["colour"])
    _rect(d, [width // 3, header // 4, width * 2 // 3, header * 3 // 4], fill=(255, 255, 255))  # search box
    offset = -(scene["scroll"] // 60)
    y = header + 6 + offset
    line = max(4, height // 20)
    for i in range(12):
        x1 = 8 + (i % 3) * 2
        x2 = width - 10 - rng.randint(0, width // 3)
        if header < y < height:
            _rect(d, [x1, y, x2, min(y + line // 2, height)], fill=(170, 170, 170))
        if i % 3 == 1 and header < y + line < height - 4:
            colour = (52, 73, 94) if i // 3 != scene["highlight"] else (231, 76, 60)
            _rect(d, [x1, y + line, x1 + width // 5, min(y + 2 * line, height)], fill=colour)
        y += int(line * 1.6)
    if scene.get("cookie"):
        _rect(d, [0, height - height // 8, width, height], fill=(44, 62, 80))
    if scene.get("toast"):
        _rect(d, [width * 2 // 3, header + 2, width - 2, header + 2 + height // 8], fill=(192, 57, 43))
    if scene.get("overlay"):
        shade = Image.new("RGB", (width, height), (0, 0, 0))
        img = Image.blend(img, shade, 0.6)
        d = ImageDraw.Draw(img)
        _rect(d, [width // 5, height // 4, width * 4 // 5, height * 3 // 4], fill=(255, 255, 255), outline=(0, 0, 0))
        d.line([width * 4 // 5 - 8, height // 4 + 3, width * 4 // 5 - 3, height // 4 + 8], fill=(0, 0, 0), width=2)
    if scene.get("login"):
        _rect(d, [0, header, width, height], fill=(236, 240, 241))
        cx, w = width // 2, width // 3
        _rect(
            d, [cx - w // 2, height // 4, cx + w // 2, height * 3 // 4], fill=(255, 255, 255), outline=(127, 140, 141)
        )
        for k in range(2):
            yy = height // 4 + 8 + k * (height // 8)
            _rect(d, [cx - w // 2 + 6, yy, cx + w // 2 - 6, yy + height // 14], outline=(127, 140, 141))
        _rect(
            d,
            [cx - w // 2 + 6, height * 3 // 4 - height // 8, cx + w // 2 - 6, height * 3 // 4 - 6],
            fill=(41, 128, 185),
        )
    if scene.get("captcha"):
        cx, cy, s = width // 2, height // 2, min(width, height) // 2
        cell = max(2, s // 4)
        for gx in range(4):
            for gy in range(4):
                c = tuple(rng.randint(40, 220) for _ in range(3))
                _rect(
                    d,
                    [
                        cx - s // 2 + gx * cell,
                        cy - s // 2 + gy * cell,
                        cx - s // 2 + (gx + 1) * cell - 1,
                        cy - s // 2 + (gy + 1) * cell - 1,
                    ],
                    fill=c,
                )
        _rect(d, [cx - s // 2 - 3, cy - s // 2 - 3, cx + s // 2 + 3, cy + s // 2 + 3], outline=(26, 115, 232), width=3)
    buffer = io.BytesIO()
    img.save(buffer, format="PNG", optimize=False, compress_level=6)
    return buffer.getvalue()


def episode_to_task(episode: Episode, screenshot_paths: list[str]) -> dict[str, Any]:
    """The store's task layout (see :func:`worldagent.intervention.store.add_task`)."""
    steps = []
    for i, step in enumerate(episode.steps):
        after = episode.steps[i + 1].page if i + 1 < len(episode.steps) else step.page
        steps.append(
            {
                "index": i,
                "action": step.action,
                "target": step.target,
                "success": step.success,
                "page_before": step.page,
                "page_after": after,
                "screenshot_path": screenshot_paths[i],
            }
        )
    interventions = []
    if episode.cause:
        interventions.append({"step": len(episode.steps) - 1, "reason": episode.cause, "details": "simulated"})
    return {
        "session_id": episode.session_id,
        "goal": episode.goal,
        "start_url": episode.start_url,
        "category": episode.category,
        "status": episode.status,
        "max_steps": episode.max_steps,
        "steps": steps,
        "interventions": interventions,
    }
