"""The Playwright capture helper against a local page on 127.0.0.1 in headless Chromium."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from worldagent.intervention.recorder import Recorder, capture_page_state
from worldagent.intervention.store import load_tasks, open_store
from worldagent.storytest.runner import BrowserUnavailableError, find_chromium

try:
    CHROMIUM: str | None = find_chromium()
except BrowserUnavailableError:
    CHROMIUM = None

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (apt-get install chromium)"),
]

PAGE = """<!doctype html><html><head><title>Shop</title></head><body style="height:3000px">
<h1>Lamps</h1><input placeholder="Search"><button>Go</button><a href="/x">Basket</a>
<div role="dialog" aria-modal="true"><button aria-label="Close">x</button></div></body></html>"""


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "index.html").write_text(PAGE)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(tmp_path)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
    finally:
        httpd.shutdown()


def test_capture_and_record_a_live_page(server: str, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    rec = Recorder(open_store(f"sqlite:///{tmp_path / 'exp.db'}"), tmp_path / "shots")
    sid = rec.start_task("buy a lamp", server, "ecommerce", session_id="live")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 800, "height": 600})
            page.goto(server)
            page.evaluate("window.scrollTo(0, 400)")
            shot, state = capture_page_state(page, rec.screenshot_path(sid, 0))
        finally:
            browser.close()
    assert Path(shot).read_bytes()[:4] == b"\x89PNG"
    assert state["url"] == server and state["title"] == "Shop"
    s = state["state"]
    assert (
        s["scroll_y"] == 400
        and s["scroll_height"] >= 3000
        and (s["viewport_width"], s["viewport_height"]) == (800, 600)
    )
    assert (
        s["interactive_elements"] == 4
        and 'button "Go"' in s["accessibility_summary"]
        and "dialog open" in s["accessibility_summary"]
    )
    rec.record_step(sid, "click", "button", True, state, None, shot)
    rec.finish(sid, "complete")
    (task,) = load_tasks(rec.store)
    assert task["steps"][0]["page_before"]["state"]["interactive_elements"] == 4
