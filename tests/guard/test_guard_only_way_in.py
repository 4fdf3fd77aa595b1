"""The guarded boundaries are the only way in: a module that reads a file or parses YAML another way fails.

An AST scan over ``worldagent/`` and ``flows/``. What counts as a way in: the builtin ``open`` or a
``.open(...)`` method for reading, ``os.open`` without a write flag, ``.read_text()``/``.read_bytes()``
(except the guard's ``files.`` and the sandbox's, which are the guard), ``json.load`` on a handle,
PyYAML's loaders and ruamel's ``YAML()`` anywhere but ``worldagent/guard/yaml.py``, and an unbounded
``sys.stdin.read()``. The allow-list is short and says why each entry reads without the guard.
"""

from __future__ import annotations

import ast
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
SCANNED = ("worldagent", "flows")

# Files that read without the guard, and why. Nothing here reads a file a user or a model names.
ALLOWED: dict[str, str] = {
    "worldagent/guard/files.py": "the file guard itself",
    "worldagent/guard/yaml.py": "the YAML guard itself",
    "worldagent/io.py": "opens a directory it just wrote, to fsync it (nothing is read)",
    "worldagent/pipeline/deps.py": "parses the project's own Python modules to compute code dependencies",
    "worldagent/pipeline/costs.py": "reads /proc files the kernel writes (peak memory, the CPU's name)",
    "worldagent/lm/pretrained.py": "reads the GGUF files of installed base-model packages",
    "worldagent/storytest/runner.py": "reads axe-core's script from its installed package",
}

YAML_LOADERS = {"load", "safe_load", "full_load", "unsafe_load", "load_all", "safe_load_all", "parse", "compose"}
GUARDED_RECEIVERS = {"files", "sandbox"}  # worldagent.guard.files, and the sandbox that reads through it
WRITE_MODES = set("wax+")


def _mode_is_write(call: ast.Call, position: int) -> bool:
    mode: ast.expr | None = call.args[position] if len(call.args) > position else None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and bool(WRITE_MODES & set(mode.value))


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _name(node.func) + "()"
    return "?"


def _in_memory(call: ast.Call) -> bool:
    return bool(call.args) and isinstance(call.args[0], ast.Call) and _name(call.args[0].func).endswith("BytesIO")


def ways_in(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of every read that bypasses the guard in ``tree``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ruamel"):
            found.append((node.lineno, f"imports {node.module}"))
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"imports {a.name}") for a in node.names if a.name.startswith("ruamel")]
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = _name(func)
        if isinstance(func, ast.Name) and func.id == "open" and not _mode_is_write(node, 1):
            found.append((node.lineno, "open() for reading"))
        elif isinstance(func, ast.Name) and func.id == "YAML":
            found.append((node.lineno, "ruamel YAML()"))
        elif isinstance(func, ast.Attribute):
            receiver = _name(func.value).split(".")[-1]
            if func.attr == "open" and receiver == "os":
                flags = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
                if "O_WRONLY" not in flags and "O_RDWR" not in flags:
                    found.append((node.lineno, "os.open() for reading"))
            elif func.attr == "open" and not _mode_is_write(node, 0) and not _in_memory(node):
                found.append((node.lineno, f"{name}() for reading"))
            elif func.attr in ("read_text", "read_bytes") and receiver not in GUARDED_RECEIVERS:
                found.append((node.lineno, f"{name}()"))
            elif name == "json.load":
                found.append((node.lineno, "json.load() on a handle"))
            elif receiver == "yaml" and func.attr in YAML_LOADERS:
                found.append((node.lineno, f"{name}()"))
            elif name in ("sys.stdin.read", "sys.stdin.buffer.read") and not node.args:
                found.append((node.lineno, f"unbounded {name}()"))
    return found


def scanned_files() -> list[Path]:
    return sorted(path for top in SCANNED for path in (PROJECT / top).rglob("*.py"))


def test_every_read_goes_through_the_guard() -> None:
    bypasses = []
    for path in scanned_files():
        relative = path.relative_to(PROJECT).as_posix()
        if relative in ALLOWED:
            continue
        for line, what in ways_in(ast.parse(path.read_text(encoding="utf-8"), filename=relative)):
            bypasses.append(f"{relative}:{line}: {what}")
    assert not bypasses, (
        "read through worldagent.guard (files.read_text/read_bytes, guard.yaml.read_yaml/load_yaml, "
        "worldagent.io.read_json) instead of:\n" + "\n".join(bypasses)
    )


def test_the_allow_list_is_short_and_current() -> None:
    assert len(ALLOWED) <= 8
    for relative in ALLOWED:
        assert (PROJECT / relative).is_file(), f"{relative} is allowed but gone: remove it from ALLOWED"


def test_the_scan_finds_each_way_in() -> None:
    source = """
import yaml
from ruamel.yaml import YAML
open(p)
open(p, "rb")
p.open()
Path(p).read_text(encoding="utf-8")
p.read_bytes()
json.load(handle)
yaml.safe_load(text)
YAML().load(text)
os.open(p, os.O_RDONLY)
sys.stdin.read()
"""
    lines = [line for line, _ in ways_in(ast.parse(source))]
    # every line but `import yaml` (PyYAML also dumps; its loaders are what is caught)
    assert sorted(lines) == list(range(3, 14)), ways_in(ast.parse(source))


def test_the_scan_lets_writes_and_the_guard_through() -> None:
    source = """
open(p, "w")
p.open("ab")
os.open(p, os.O_WRONLY | os.O_APPEND)
files.read_text(p)
self.sandbox.read_text(p)
Image.open(io.BytesIO(data))
sys.stdin.buffer.read(limit + 1)
json.loads(text)
"""
    assert ways_in(ast.parse(source)) == []
