"""The reference solution of a story: the files an ideal agent writes for its intent.

A story file mixes components and stories. For one story we split it the way an agent works:
``writeStyles`` the component's ``*.css.ts``, ``writeTemplate`` a module exporting the local
components the story uses, ``writeStory`` a story file that imports them, then ``runStory``.
Tokens (``*.tokens.ts``) are given to the agent: they already exist in its sandbox.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from worldagent.policy.degrade import Solution
from worldagent.stories.discover import StoryRecord
from worldagent.stories.parse import parse_tsx

TESTING_MODULE = "plaited/testing"


def kebab_case(name: str) -> str:
    out: list[str] = []
    for index, char in enumerate(name):
        if char.isupper() and index > 0 and not name[index - 1].isupper():
            out.append("-")
        out.append(char.lower())
    return "".join(out).replace("_", "-")


def _import_statements(story_source: str, file: str) -> list[tuple[str, str]]:
    """(module specifier, statement text) for each import of the original story file."""
    tree = parse_tsx(story_source.encode("utf-8"), file)
    imports: list[tuple[str, str]] = []
    for node in tree.root_node.named_children:
        if node.type != "import_statement":
            continue
        source = node.child_by_field_name("source")
        specifier = (source.text or b"").decode("utf-8")[1:-1] if source is not None else ""
        imports.append((specifier, (node.text or b"").decode("utf-8")))
    return imports


def _split_template_source(template_source: str, file: str) -> tuple[list[str], list[str], str]:
    """(local declaration names, declaration texts, story export text) from discover's template_source."""
    tree = parse_tsx(template_source.encode("utf-8"), file)
    names: list[str] = []
    declarations: list[str] = []
    story_export = ""
    for node in tree.root_node.named_children:
        text = (node.text or b"").decode("utf-8")
        if node.type == "export_statement":
            story_export = text
        elif node.type == "lexical_declaration":
            declarations.append(text)
            for declarator in node.named_children:
                name = declarator.child_by_field_name("name") if declarator.type == "variable_declarator" else None
                if name is not None and name.type == "identifier":
                    names.append((name.text or b"").decode("utf-8"))
    if not story_export:
        raise ValueError(f"{file}: template_source has no story export")
    return names, declarations, story_export


def reference_solution(record: StoryRecord, stories_root: Path) -> Solution:
    """Build the sandbox files of a story's reference solution (paths relative to the stories root)."""
    story_source = (stories_root / record.file).read_text(encoding="utf-8")
    imports = _import_statements(story_source, record.file)
    names, declarations, story_export = _split_template_source(record.template_source, record.file)
    directory = PurePosixPath(record.file).parent
    template_path = str(directory / f"{record.component}.template.tsx") if declarations else None
    story_path = str(directory / f"{kebab_case(record.export)}.stories.tsx")

    files: dict[str, str] = {}
    for style_file in record.style_files:
        files[style_file] = (stories_root / style_file).read_text(encoding="utf-8")
    story_imports = [text for _, text in imports]
    if template_path is not None:
        template_imports = [text for specifier, text in imports if specifier != TESTING_MODULE]
        exported = [f"export {text}" for text in declarations]
        files[template_path] = "\n".join(template_imports) + "\n\n" + "\n\n".join(exported) + "\n"
        story_imports.append(f"import {{ {', '.join(names)} }} from './{PurePosixPath(template_path).name}'")
    files[story_path] = "\n".join(story_imports) + "\n\n" + story_export + "\n"
    return Solution(files=files, template_path=template_path, style_paths=tuple(record.style_files), story_path=story_path)
