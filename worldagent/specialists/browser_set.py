"""The embedded default set of browser decisions: simulated pages, a task, and the right element to act on.

A specialist's own feedback is often a handful of rows; this set gives every specialist (and its
untrained base) a held-out *action accuracy* that means something: the share of decisions where the
model picks exactly the right element and the right action (click, fill, select).

A page is a compact description (URL, title, the interactive elements with role, accessible name
and ref), rendered as the ARIA-snapshot text that feedback rows carry in ``pageSnapshot``. A decision
becomes a good feedback row (``{input: {pageSnapshot, task}, output: {action, selectorOrRef, value}}``)
and from there the same SFT conversation as any feedback row (:func:`worldagent.specialists.decisions.conversation`),
so the embedded set and feedback train and evaluate the same way.

The generator is deterministic for a seed. Refs are random per page and elements are shuffled, so
position and ref say nothing: the model has to read the names (distractors share roles and words:
"Save draft" next to "Save changes"). The held-out split uses task phrasings that training never
uses, on every page kind, plus page kinds that training never shows (:data:`HELDOUT_KINDS`).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Action = Literal["click", "fill", "select"]
Split = Literal["train", "heldout"]


@dataclass(frozen=True)
class Element:
    role: str  # button, link, textbox, combobox, checkbox, searchbox, tab, menuitem
    name: str  # the accessible name
    ref: str = ""  # e.g. "e17"; assigned when a page is laid out
    options: tuple[str, ...] = ()  # a combobox's choices


@dataclass(frozen=True)
class Page:
    kind: str
    url: str
    title: str
    heading: str
    elements: tuple[Element, ...]


@dataclass(frozen=True)
class Decision:
    """One page, one task and the answer: act on ``target`` with ``action`` (and ``value`` for fill/select)."""

    page: Page
    task: str
    action: Action
    target: str  # the target element's ref
    value: str | None
    template: str  # "<action>:<phrasing index>", for the split's bookkeeping
    split: Split

    @property
    def selector(self) -> str:
        return f"[ref={self.target}]"


# --------------------------------------------------------------------------- the page kinds

# (role, name, action, values). Each kind lists more elements than a page shows; the rest are left out
# or become distractors. Values: what a fill types or a select picks.
_KINDS: dict[str, dict[str, Any]] = {
    "checkout": {
        "url": "https://shop.example.com/checkout",
        "title": "Checkout · Example Shop",
        "elements": [
            ("textbox", "Email address", "fill", ["ana@example.com", "li.wei@example.org"]),
            ("textbox", "Card number", "fill", ["4242 4242 4242 4242", "5555 4444 3333 1111"]),
            ("textbox", "Coupon code", "fill", ["SPRING10", "WELCOME5"]),
            ("combobox", "Country", "select", ["France", "Canada", "Japan", "Brazil"]),
            ("combobox", "Shipping method", "select", ["Standard", "Express", "Pickup"]),
            ("button", "Place order", "click", []),
            ("button", "Apply coupon", "click", []),
            ("link", "Return to cart", "click", []),
            ("checkbox", "Save my details", "click", []),
        ],
    },
    "search": {
        "url": "https://find.example.com/",
        "title": "Example Search",
        "elements": [
            ("searchbox", "Search the web", "fill", ["cheap flights to Oslo", "weather tomorrow"]),
            ("button", "Search", "click", []),
            ("link", "Images", "click", []),
            ("link", "News", "click", []),
            ("combobox", "Region", "select", ["Worldwide", "Germany", "India"]),
            ("button", "I'm feeling lucky", "click", []),
            ("link", "Advanced search", "click", []),
        ],
    },
    "login": {
        "url": "https://accounts.example.com/login",
        "title": "Sign in · Example Accounts",
        "elements": [
            ("textbox", "Username", "fill", ["maria.k", "devops-bot"]),
            ("textbox", "Password", "fill", ["correct horse battery", "s3cret!"]),
            ("button", "Sign in", "click", []),
            ("link", "Forgot password?", "click", []),
            ("link", "Create account", "click", []),
            ("checkbox", "Remember me", "click", []),
            ("combobox", "Language", "select", ["English", "Español", "Deutsch"]),
        ],
    },
    "settings": {
        "url": "https://app.example.com/settings/profile",
        "title": "Settings · Example App",
        "elements": [
            ("textbox", "Display name", "fill", ["Sam Rivera", "Kim Park"]),
            ("combobox", "Time zone", "select", ["UTC", "Europe/Paris", "America/Chicago"]),
            ("checkbox", "Email notifications", "click", []),
            ("button", "Save changes", "click", []),
            ("button", "Save draft", "click", []),
            ("button", "Delete account", "click", []),
            ("tab", "Security", "click", []),
            ("tab", "Billing", "click", []),
        ],
    },
    "article": {
        "url": "https://news.example.com/2026/11/rivers",
        "title": "Rivers are rising · Example News",
        "elements": [
            ("link", "Share on social media", "click", []),
            ("button", "Subscribe", "click", []),
            ("link", "Next article", "click", []),
            ("link", "Previous article", "click", []),
            ("textbox", "Add a comment", "fill", ["Great reporting.", "Where is the data from?"]),
            ("button", "Post comment", "click", []),
            ("combobox", "Text size", "select", ["Small", "Medium", "Large"]),
        ],
    },
    "signup": {
        "url": "https://join.example.com/register",
        "title": "Create your account",
        "elements": [
            ("textbox", "Full name", "fill", ["Nora Quinn", "Omar Haddad"]),
            ("textbox", "Work email", "fill", ["nora@acme.test", "omar@globex.test"]),
            ("combobox", "Company size", "select", ["1-10", "11-50", "51-200"]),
            ("checkbox", "I agree to the terms", "click", []),
            ("button", "Create account", "click", []),
            ("link", "Already have an account? Sign in", "click", []),
        ],
    },
    "inbox": {
        "url": "https://mail.example.com/inbox",
        "title": "Inbox (3) · Example Mail",
        "elements": [
            ("button", "Compose", "click", []),
            ("searchbox", "Search mail", "fill", ["invoice march", "from:boss"]),
            ("link", "Sent", "click", []),
            ("link", "Drafts", "click", []),
            ("button", "Archive", "click", []),
            ("button", "Mark as read", "click", []),
            ("combobox", "Sort by", "select", ["Newest", "Oldest", "Unread first"]),
        ],
    },
    "booking": {
        "url": "https://travel.example.com/flights",
        "title": "Book a flight · Example Travel",
        "elements": [
            ("textbox", "From", "fill", ["Lisbon", "Nairobi"]),
            ("textbox", "To", "fill", ["Reykjavik", "Seoul"]),
            ("combobox", "Passengers", "select", ["1 adult", "2 adults", "1 adult, 1 child"]),
            ("combobox", "Cabin class", "select", ["Economy", "Business"]),
            ("checkbox", "Flexible dates", "click", []),
            ("button", "Search flights", "click", []),
            ("link", "Manage booking", "click", []),
        ],
    },
    # Held-out kinds: never shown in training (see HELDOUT_KINDS).
    "support": {
        "url": "https://help.example.com/contact",
        "title": "Contact support · Example Help",
        "elements": [
            ("textbox", "Subject", "fill", ["Refund for order 1182", "App crashes on start"]),
            ("textbox", "Describe your problem", "fill", ["The page stays blank.", "I was charged twice."]),
            ("combobox", "Topic", "select", ["Billing", "Technical issue", "Other"]),
            ("button", "Send message", "click", []),
            ("link", "Browse help articles", "click", []),
            ("checkbox", "Attach diagnostics", "click", []),
        ],
    },
    "admin": {
        "url": "https://admin.example.com/users",
        "title": "Users · Example Admin",
        "elements": [
            ("searchbox", "Filter users", "fill", ["jordan", "suspended"]),
            ("button", "Invite user", "click", []),
            ("button", "Export CSV", "click", []),
            ("combobox", "Role", "select", ["Viewer", "Editor", "Owner"]),
            ("link", "Audit log", "click", []),
            ("checkbox", "Show deactivated users", "click", []),
        ],
    },
}
HELDOUT_KINDS: tuple[str, ...] = ("support", "admin")

# Links and buttons any page may carry: distractors that share words with the targets.
_COMMON = [
    ("link", "Home"),
    ("link", "Help"),
    ("button", "Sign out"),
    ("link", "Privacy policy"),
    ("button", "Cancel"),
    ("link", "Contact us"),
    ("button", "Open menu"),
    ("link", "Settings"),
]

# Task phrasings per action: the first ones train, the held-out ones are never seen in training.
_TEMPLATES: dict[str, dict[Split, list[str]]] = {
    "click": {
        "train": [
            'Click the "{name}" {role}.',
            "Press {name}.",
            "Click on {name}.",
            "Use the {role} named {name}.",
        ],
        "heldout": ["Hit the {role} labelled {name}.", "Go ahead and activate {name}."],
    },
    "fill": {
        "train": [
            'Type "{value}" into the {name} field.',
            "Enter {value} as the {name}.",
            "Fill {name} with {value}.",
            "{name}: {value}.",  # also a select phrasing: the element's role decides the action
        ],
        "heldout": ["Put {value} in the {name} box.", "Set {name} to {value}."],
    },
    "select": {
        "train": [
            'Choose "{value}" in the {name} list.',
            "Select {value} from {name}.",
            "Pick {value} as the {name}.",
            "{name}: {value}.",
        ],
        "heldout": ["Change {name} to {value}.", "From the {name} dropdown, choose {value}."],
    },
}


def _layout(kind: str, rng: random.Random) -> tuple[Page, list[tuple[Element, str, list[str]]]]:
    """A page of ``kind``: a random subset of its elements (at least 4) and 1-3 common ones, shuffled,
    each with a fresh random ref; returns the page and its actionable elements."""
    spec = _KINDS[kind]
    pool = list(spec["elements"])
    chosen = rng.sample(pool, rng.randint(min(4, len(pool)), len(pool)))
    common = rng.sample(_COMMON, rng.randint(1, 3))
    refs = rng.sample(range(2, 100), len(chosen) + len(common))
    laid: list[tuple[Element, str, list[str]]] = []
    for (role, name, action, values), ref in zip(chosen, refs, strict=False):
        options = tuple(values) if action == "select" else ()
        laid.append((Element(role, name, f"e{ref}", options), action, list(values)))
    elements = [item[0] for item in laid]
    elements += [Element(role, name, f"e{ref}") for (role, name), ref in zip(common, refs[len(chosen) :], strict=True)]
    rng.shuffle(elements)
    heading = spec["title"].split(" · ")[0]
    return Page(kind, spec["url"], spec["title"], heading, tuple(elements)), laid


def make_decision(kind: str, split: Split, rng: random.Random) -> Decision:
    page, actionable = _layout(kind, rng)
    element, action, values = rng.choice(actionable)
    index = rng.randrange(len(_TEMPLATES[action][split]))
    template = _TEMPLATES[action][split][index]
    value = rng.choice(values) if values else None
    task = template.format(name=element.name, role=element.role, value=value)
    return Decision(page, task, action, element.ref, value, f"{action}:{split}:{index}", split)  # type: ignore[arg-type]


def generate_decisions(seed: int, count: int, split: Split) -> list[Decision]:
    """``count`` decisions of ``split``, deterministic for ``seed``.

    Train: the training kinds with the training phrasings. Held-out: every kind (the held-out kinds
    included) with the held-out phrasings only.
    """
    kinds = [k for k in _KINDS if k not in HELDOUT_KINDS] if split == "train" else list(_KINDS)
    digest = hashlib.sha256(f"browser-set:{seed}:{split}".encode()).hexdigest()
    rng = random.Random(int(digest[:16], 16))
    return [make_decision(kinds[i % len(kinds)], split, rng) for i in range(count)]


def default_set(seed: int, train: int, heldout: int) -> tuple[list[Decision], list[Decision]]:
    """The embedded set: (train, held-out) decisions."""
    return generate_decisions(seed, train, "train"), generate_decisions(seed, heldout, "heldout")


# --------------------------------------------------------------------------- as feedback rows


def render_element(element: Element) -> str:
    line = f'- {element.role} "{element.name}" [ref={element.ref}]'
    if element.options:
        line += ": options " + ", ".join(f'"{option}"' for option in element.options)
    return line


def render_page(page: Page) -> str:
    """The page snapshot text of a feedback row (URL, title, heading, then the elements)."""
    lines = [f"url: {page.url}", f"title: {page.title}", f'- heading "{page.heading}" [level=1]']
    lines += [render_element(element) for element in page.elements]
    return "\n".join(lines)


def feedback_row(decision: Decision) -> dict[str, Any]:
    """A good browser-decision feedback row, as the feedback store holds one."""
    return {
        "input": {"pageSnapshot": render_page(decision.page), "task": decision.task},
        "output": {"action": decision.action, "selectorOrRef": decision.selector, "value": decision.value},
        "label": "good",
        "notes": f"embedded browser set ({decision.split}, {decision.page.kind}, {decision.template})",
    }


def feedback_rows(decisions: Sequence[Decision]) -> list[dict[str, Any]]:
    return [feedback_row(d) for d in decisions]


def snapshot_refs(page_snapshot: str) -> list[str]:
    """The ``[ref=…]`` selectors of a snapshot's elements, in order (what constrained decoding may pick)."""
    refs: list[str] = []
    start = page_snapshot.find("[ref=")
    while start != -1:
        end = page_snapshot.find("]", start)
        if end == -1:
            break
        ref = page_snapshot[start : end + 1]
        if ref not in refs and len(ref) <= 64:
            refs.append(ref)
        start = page_snapshot.find("[ref=", end)
    return refs


def row_key(row: Mapping[str, Any]) -> str:
    """What makes two rows the same decision (the split test compares these)."""
    inp = row["input"]
    return f"{inp['task']}\n{inp['pageSnapshot']}"


def embedded_rows(settings: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train, held-out) feedback rows of the embedded set for ``specialists.browser_set``."""
    train, heldout = default_set(settings.seed, settings.train, settings.heldout)
    return feedback_rows(train), feedback_rows(heldout)
