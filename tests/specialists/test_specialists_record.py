"""Record mode in headless Chromium against a local page on 127.0.0.1: clicks, fills and navigations
become good feedback rows with the page snapshot as it was when the person decided."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from worldagent.storytest.runner import BrowserUnavailableError, find_chromium

try:
    CHROMIUM: str | None = find_chromium()
except BrowserUnavailableError:
    CHROMIUM = None

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (apt-get install chromium)"),
]

PAGES = {
    "/": """<!doctype html><html><head><title>Shop</title></head><body>
<h1>Shoes</h1><label for="q">Search</label><input id="q">
<button id="go" onclick="document.getElementById('out').textContent = 'Results for ' + q.value">Search</button>
<p id="out"></p><a href="/cart">Cart</a></body></html>""",
    "/cart": """<!doctype html><html><head><title>Cart</title></head><body><h1>Your cart</h1>
<button>Checkout</button></body></html>""",
    "/help": """<!doctype html><html><head><title>Help</title></head><body><h1>Help</h1></body></html>""",
}


class Pages(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = PAGES.get(self.path.split("?")[0])
        self.send_response(200 if body else 404)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write((body or "not found").encode())

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def drive(site: str):  # type: ignore[no-untyped-def]
    def act(page) -> None:  # type: ignore[no-untyped-def]
        page.get_by_label("Search").click()
        page.keyboard.type("running shoes")
        page.get_by_role("button", name="Search").click()  # the fill is sent before this click
        page.get_by_role("link", name="Cart").click()  # leads to /cart: not a separate navigate step
        page.wait_for_url(f"{site}/cart")
        page.get_by_role("heading", name="Your cart").wait_for()
        page.goto(f"{site}/help")  # as if typed in the address bar: a navigate step
        page.get_by_role("heading", name="Help").wait_for()

    return act


def test_clicks_fills_and_navigations_are_captured_with_the_snapshot_at_decision_time(site: str) -> None:
    from worldagent.specialists.record import record_session

    steps = record_session(f"{site}/", headless=True, drive=drive(site), chromium_path=CHROMIUM)
    assert [(s.action, s.value) for s in steps] == [
        ("fill", "running shoes"),  # clicking into the field is part of the fill, not a step of its own
        ("click", None),  # Search
        ("click", None),  # Cart
        ("navigate", f"{site}/help"),
    ]
    fill, search, cart, navigate = steps
    assert f'- textbox "Search" {fill.selectorOrRef}' in fill.pageSnapshot
    assert '- textbox "Search"' in fill.pageSnapshot and ": running shoes" not in fill.pageSnapshot  # before typing
    assert f'- button "Search" {search.selectorOrRef}' in search.pageSnapshot
    assert "Results for" not in search.pageSnapshot  # the snapshot is from before the click's effect
    assert f'- link "Cart" {cart.selectorOrRef}' in cart.pageSnapshot
    assert '- heading "Your cart"' in navigate.pageSnapshot and "(" + site + "/cart)" in navigate.pageSnapshot


def search_snapshot(steps: list) -> str:  # type: ignore[type-arg]
    return steps[1].pageSnapshot


def test_recorded_steps_are_posted_as_good_feedback_rows(site: str, tmp_path: Path, servers: list) -> None:  # type: ignore[type-arg]
    from specialists_helpers import Server, free_port, write_params

    from worldagent.specialists.client import SpecialistsClient
    from worldagent.specialists.record import record_actions, record_session

    steps = record_session(f"{site}/", headless=True, drive=drive(site), chromium_path=CHROMIUM)
    params = write_params(
        tmp_path / "params.yaml",
        tmp_path / "base",
        tmp_path / "feedback.db",
        tmp_path / "registry.db",
        "http://127.0.0.1:9",
    )
    args = ["specialists", "serve", "--params", str(params), "--root", str(tmp_path), "--token", "s3cret"]
    service = Server(args, tmp_path, free_port(), tmp_path / "service.log").start()
    servers.append(service)
    with SpecialistsClient(service.url, token="s3cret") as client:
        result = record_actions(client, agent_id="shop-agent", task="Find running shoes and open the cart", steps=steps)
        rows = client.list_feedback(targetId="shop-agent")
    assert len(result["feedback"]) == 4 and {row["label"] for row in rows} == {"good"}
    oldest = sorted(rows, key=lambda row: row["id"])
    assert [row["output"]["action"] for row in oldest] == ["fill", "click", "click", "navigate"]
    assert oldest[0]["input"]["task"] == "Find running shoes and open the cart"
    assert oldest[1]["input"]["previousActions"][-1]["value"] == "running shoes"
    assert oldest[1]["input"]["pageSnapshot"] == steps[1].pageSnapshot


def test_the_record_command_says_when_nothing_was_recorded(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    from worldagent.cli import main

    code = main(["specialists", "record", f"{site}/", "--agent", "a", "--task", "t", "--headless", "--timeout", "1"])
    assert code == 2
    assert "nothing was recorded" in capsys.readouterr().err
