"""The dependency lock: every declared dependency is pinned and the constraints file agrees with it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "requirements" / "constraints.txt"
PIN = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==(?P<version>[^\s;]+)$")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _constraints() -> dict[str, str]:
    pins: dict[str, str] = {}
    for number, line in enumerate(CONSTRAINTS.read_text().splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = PIN.match(line)
        assert match, f"{CONSTRAINTS.name}:{number}: not an exact pin: {line!r}"
        pins[_canonical(match["name"])] = match["version"]
    return pins


def _declared() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [*project["dependencies"], *(req for group in project["optional-dependencies"].values() for req in group)]


def test_every_constraint_is_an_exact_pin_and_excludes_the_project() -> None:
    pins = _constraints()
    assert "world-agent-pipeline" not in pins
    assert len(pins) > 100  # the whole transitive set, not just the direct dependencies


def test_declared_pins_match_the_lock() -> None:
    pins = _constraints()
    for requirement in _declared():
        match = PIN.match(requirement.replace(" ", ""))
        if match is None:  # a range (sqlalchemy, pydantic): the lock must still name the package
            name = re.match(r"[A-Za-z0-9_.\-]+", requirement)
            assert name and _canonical(name.group()) in pins, f"{requirement} is not in {CONSTRAINTS.name}"
            continue
        name = _canonical(match["name"])
        assert pins.get(name) == match["version"], f"pyproject.toml pins {requirement}, the lock has {pins.get(name)}"


def test_runtime_dependencies_are_pinned_exactly() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    ranges = {"sqlalchemy", "pydantic"}  # deliberate ranges; the lock fixes their versions
    loose = [
        req
        for req in project["dependencies"]
        if "==" not in req and _canonical(re.split(r"[<>=\[ ]", req)[0]) not in ranges
    ]
    assert loose == []
