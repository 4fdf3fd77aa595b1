"""Record mode: a person's clicks, fills and navigations in Chromium become good feedback rows.

``BrowserRecorder`` opens one page (Playwright, Debian's Chromium; headed for a person, headless in
tests) with a small script in every document. The script keeps an accessibility-style snapshot of
the page in the same format the specialists are trained on (``- button "Buy" [ref=e3]``) and, at
decision time, reports the action with the snapshot as it was *before* the action took effect:

- click: on ``pointerdown`` (before the click handler or the navigation it causes runs);
- fill: the snapshot taken when the field got focus, sent with the final value on ``change``;
- navigate: a main-frame navigation that no recorded action caused (a typed URL, back/forward),
  with the previous page's last snapshot.

``selectorOrRef`` is the ``[ref=eN]`` of the target in that snapshot. ``record_actions`` turns the
recording into ``POST /feedback/record`` rows through :class:`SpecialistsClient`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MAX_SNAPSHOT_CHARS = 200_000  # the API's pageSnapshot limit

# Runs in every document before the page's own scripts.
_CAPTURE_SCRIPT = r"""
(() => {
  if (window.__worldagentRecorder) return;
  window.__worldagentRecorder = true;
  const ROLES = {A: "link", BUTTON: "button", SELECT: "combobox", TEXTAREA: "textbox",
                 H1: "heading", H2: "heading", H3: "heading", H4: "heading", H5: "heading", H6: "heading"};
  const INPUT_ROLES = {checkbox: "checkbox", radio: "radio", submit: "button", button: "button", reset: "button",
                       search: "searchbox", range: "slider", number: "spinbutton"};
  const refs = new WeakMap();
  let nextRef = 1;
  function roleOf(el) {
    const explicit = el.getAttribute("role");
    if (explicit) return explicit;
    if (el.tagName === "INPUT") return INPUT_ROLES[(el.type || "text").toLowerCase()] || "textbox";
    if (el.tagName === "A" && !el.hasAttribute("href")) return null;
    return ROLES[el.tagName] || null;
  }
  function nameOf(el) {
    const label = el.getAttribute("aria-label");
    if (label) return label.trim();
    if (el.id) {
      const forLabel = document.querySelector(`label[for="${CSS.escape(el.id)}"]`);
      if (forLabel) return forLabel.textContent.trim();
    }
    const wrapping = el.closest("label");
    if (wrapping && wrapping !== el) return wrapping.textContent.trim();
    if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") {
      return (el.getAttribute("placeholder") || el.name || "").trim();
    }
    return (el.textContent || "").replace(/\s+/g, " ").trim().slice(0, 100);
  }
  function visible(el) {
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== "hidden";
  }
  function refOf(el) {
    if (!refs.has(el)) refs.set(el, `e${nextRef++}`);
    return refs.get(el);
  }
  function snapshot() {
    const lines = [];
    for (const el of document.querySelectorAll("a,button,input,select,textarea,h1,h2,h3,h4,h5,h6,[role]")) {
      const role = roleOf(el);
      if (!role || !visible(el) || el.type === "hidden") continue;
      let line = `- ${role} ${JSON.stringify(nameOf(el))}`;
      if (role === "heading") line += ` [level=${el.tagName.slice(1) || 2}]`;
      const typed = (el.tagName === "INPUT" || el.tagName === "TEXTAREA") && el.value && el.type !== "password";
      if (typed) line += `: ${el.value}`;
      lines.push(`${line} [ref=${refOf(el)}]`);
    }
    return `- document ${JSON.stringify(document.title)} (${location.href})\n` + lines.join("\n");
  }
  function target(node) {
    let el = node instanceof Element ? node : node && node.parentElement;
    while (el && !roleOf(el)) el = el.parentElement;
    return el;
  }
  function navigates(el) {
    if (el.closest("a[href]")) return true;
    const type = (el.getAttribute("type") || (el.tagName === "BUTTON" ? "submit" : "")).toLowerCase();
    return Boolean(el.form) && type === "submit";
  }
  function send(kind, el, value, shot) {
    const ref = el ? `[ref=${refOf(el)}]` : "";
    const leads = kind === "submit" || (kind === "click" && navigates(el));
    try { window.__worldagentRecord({kind, ref, value, snapshot: shot, navigates: leads}); } catch (e) {}
  }
  const focusShots = new WeakMap();
  let pending = null;  // a field being typed into: sent as one fill before whatever the person does next
  function isField(el) {
    const buttons = ["checkbox", "radio", "submit", "button", "reset"];
    return ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName) && !buttons.includes(el.type);
  }
  function flush() {
    if (!pending) return;
    const {el, shot} = pending;
    pending = null;
    send("fill", el, el.type === "password" ? "<secret>" : el.value, shot);
  }
  document.addEventListener("input", (event) => {
    const el = target(event.target);
    if (el && isField(el) && (!pending || pending.el !== el)) {
      flush();
      pending = {el, shot: focusShots.get(el) || snapshot()};
    }
  }, true);
  document.addEventListener("keydown", (event) => { if (event.key === "Enter") flush(); }, true);
  document.addEventListener("pointerdown", (event) => {
    flush();
    const el = target(event.target);
    if (!el || el.tagName === "INPUT" && !["checkbox", "radio", "submit", "button", "reset"].includes(el.type)
        || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return;
    const shot = snapshot();
    send("click", el, null, shot);
  }, true);
  document.addEventListener("focusin", (event) => {
    const el = target(event.target);
    if (el) focusShots.set(el, snapshot());
  }, true);
  document.addEventListener("change", (event) => {
    const el = target(event.target);
    if (!el || !isField(el)) return;
    if (pending && pending.el === el) { flush(); return; }
    if (el.tagName === "SELECT") send("fill", el, el.value, focusShots.get(el) || snapshot());
  }, true);
  window.addEventListener("pagehide", flush, true);
  document.addEventListener("submit", () => send("submit", null, null, ""), true);
  const report = () => { try { window.__worldagentSnapshot(snapshot()); } catch (e) {} };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", report); else report();
  document.addEventListener("visibilitychange", report);
})();
"""


@dataclass
class RecordedStep:
    """One decision as the API's ``/feedback/record`` takes it."""

    action: str
    selectorOrRef: str
    value: str | None
    pageSnapshot: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "selectorOrRef": self.selectorOrRef,
            "value": self.value,
            "pageSnapshot": self.pageSnapshot,
        }


@dataclass
class BrowserRecorder:
    """One recorded page. ``start(url)`` returns the Playwright page; ``stop()`` returns the steps."""

    headless: bool = True
    chromium_path: str | None = None
    steps: list[RecordedStep] = field(default_factory=list)
    _last_snapshot: str = ""
    _caused: bool = False  # a link click or form submit since the last navigation
    _started: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _pw: Any = None
    _browser: Any = None
    page: Any = None

    def start(self, url: str) -> Any:
        from playwright.sync_api import sync_playwright

        from worldagent.storytest.runner import CHROMIUM_ARGS, find_chromium

        executable = find_chromium(self.chromium_path)
        self._pw = sync_playwright().start()
        try:
            self._browser = self._pw.chromium.launch(
                executable_path=executable, headless=self.headless, args=list(CHROMIUM_ARGS)
            )
            context = self._browser.new_context()
            context.expose_binding("__worldagentRecord", self._on_record)
            context.expose_binding("__worldagentSnapshot", self._on_snapshot)
            context.add_init_script(_CAPTURE_SCRIPT)
            self.page = context.new_page()
            self.page.on("framenavigated", self._on_navigated)
            self.page.goto(url)
            self._started = True
        except BaseException:
            self.close()
            raise
        return self.page

    def _on_snapshot(self, _source: Any, snapshot: str) -> None:
        with self._lock:
            self._last_snapshot = str(snapshot)[:MAX_SNAPSHOT_CHARS]

    def _on_record(self, _source: Any, event: dict[str, Any]) -> None:
        kind, ref = str(event.get("kind")), str(event.get("ref") or "")
        if event.get("navigates"):
            with self._lock:
                self._caused = True  # the navigation that follows is this action's effect, not a decision
        if kind not in ("click", "fill") or not ref:
            return
        value = event.get("value")
        snapshot = str(event.get("snapshot") or "")[:MAX_SNAPSHOT_CHARS]
        with self._lock:
            self.steps.append(RecordedStep(kind, ref, None if value is None else str(value), snapshot))

    def _on_navigated(self, frame: Any) -> None:
        if self.page is None or frame != self.page.main_frame or not self._started:
            return  # the first load is where the task starts, not a decision
        with self._lock:
            if self._caused:
                self._caused = False  # the click or submit just recorded led here
                return
            self.steps.append(RecordedStep("navigate", "page", frame.url, self._last_snapshot))

    def wait_until_closed(self, timeout_s: float | None = None, poll_ms: int = 250) -> None:
        """Headed use: return when the person closes the page (or after ``timeout_s``)."""
        import time

        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not self.page.is_closed() and (deadline is None or time.monotonic() < deadline):
            try:
                self.page.wait_for_timeout(poll_ms)
            except Exception:  # noqa: BLE001 - the page or browser was closed by the person
                break

    def settle(self) -> None:
        """Let the page deliver the events it has queued (tests: call before reading ``steps``)."""
        if self.page is not None and not self.page.is_closed():
            self.page.evaluate("() => new Promise((done) => setTimeout(done, 50))")

    def stop(self) -> list[RecordedStep]:
        with contextlib.suppress(Exception):  # closed by the person already
            self.settle()
        self.close()
        with self._lock:
            return list(self.steps)

    def close(self) -> None:
        if self._browser is not None:
            with contextlib.suppress(Exception):  # already gone
                self._browser.close()
            self._browser = None
        if self._pw is not None:
            self._pw.stop()
            self._pw = None


def record_actions(
    client: Any,
    *,
    agent_id: str,
    task: str,
    steps: list[RecordedStep],
    target_type: str = "agent",
) -> dict[str, Any]:
    """Post the recorded steps as good feedback rows (one execution trail); the service's answer."""
    if not steps:
        raise ValueError("nothing was recorded: no click, fill or navigation happened on the page")
    return client.record_browser_actions(
        targetId=agent_id, task=task, actions=[s.to_dict() for s in steps], targetType=target_type
    )


def record_session(
    url: str,
    *,
    headless: bool,
    drive: Callable[[Any], None] | None = None,
    timeout_s: float | None = None,
    chromium_path: str | None = None,
) -> list[RecordedStep]:
    """Open ``url``; ``drive(page)`` acts on it (scripts, tests), else wait for a person to close the page."""
    recorder = BrowserRecorder(headless=headless, chromium_path=chromium_path)
    page = recorder.start(url)
    try:
        if drive is not None:
            drive(page)
        else:
            recorder.wait_until_closed(timeout_s)
    finally:
        steps = recorder.stop()
    return steps
