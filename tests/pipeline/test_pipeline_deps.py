"""Code dependencies are computed from imports: relative, lazy, submodules, package data."""

from __future__ import annotations

from pathlib import Path

from worldagent.pipeline.deps import code_deps


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_imports_are_followed_transitively_relative_lazy_and_by_submodule(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "tasks/__init__.py": "",
            "tasks/train.py": "from worldagent.policy import sft\n",
            "worldagent/__init__.py": "",
            "worldagent/policy/__init__.py": "",
            "worldagent/policy/sft.py": "from . import helpers\n\ndef run():\n    from ..reward import score\n",
            "worldagent/policy/helpers.py": "import json\nimport torch\n",
            "worldagent/reward.py": "",
            "worldagent/unused.py": "",
            "worldagent/policy/notes.txt": "not named by any module",
        },
    )
    assert code_deps(tmp_path, ["tasks.train"]) == [
        "tasks/__init__.py",
        "tasks/train.py",
        "worldagent/__init__.py",
        "worldagent/policy/__init__.py",
        "worldagent/policy/helpers.py",
        "worldagent/policy/sft.py",
        "worldagent/reward.py",
    ]


def test_a_data_folder_a_module_names_beside_itself_is_a_dependency(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "worldagent/__init__.py": "",
            "worldagent/clip.py": 'from pathlib import Path\nCONFIGS = Path(__file__).parent / "clip_configs"\n',
            "worldagent/clip_configs/tiny.json": "{}",
            "worldagent/registry/__init__.py": "",
            "worldagent/io.py": 'KIND = "registry"  # names a subpackage, which is code, not data\n',
        },
    )
    assert "worldagent/clip_configs" in code_deps(tmp_path, ["worldagent.clip"])
    assert code_deps(tmp_path, ["worldagent.io"]) == ["worldagent/__init__.py", "worldagent/io.py"]
