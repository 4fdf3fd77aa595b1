"""The reference solution of a story: the files an ideal agent writes for its intent.

A story file mixes components and stories. For one story we split it the way an agent works:
``writeStyles`` the component's ``*.css.ts``, ``writeTemplate`` a module exporting the local
components the story uses, ``writeStory`` a story file that imports them, then ``runStory``.
Tokens (``*.tokens.ts``) are given to the agent: they already exist in its sandbox.

The first story of a file creates its component; every later story adds a story to a component
that already exists, as in a real component library: its styles and its template module (every
local component of the file, exported) are given in the sandbox, and the solution writes only the
story and runs it.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from worldagent.guard import files
from worldagent.stories.discover import StoryRecord
from worldagent.stories.parse import DEFAULT_MAX_BYTES, parse_tsx
from worldagent.world_agent.degrade import Solution

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


def _file_declarations(story_source: str, file: str) -> tuple[list[str], list[str], list[str]]:
    """(local declaration names, their texts, story export names in file order) of a story file."""
    tree = parse_tsx(story_source.encode("utf-8"), file)
    names: list[str] = []
    declarations: list[str] = []
    exports: list[str] = []
    for node in tree.root_node.named_children:
        declaration = node.child_by_field_name("declaration") if node.type == "export_statement" else node
        if declaration is None or declaration.type != "lexical_declaration":
            continue
        for declarator in declaration.named_children:
            name = declarator.child_by_field_name("name") if declarator.type == "variable_declarator" else None
            if name is None or name.type != "identifier":
                continue
            text = (name.text or b"").decode("utf-8")
            if node.type == "export_statement":
                value = declarator.child_by_field_name("value")
                function = (
                    value.child_by_field_name("function")
                    if value is not None and value.type == "call_expression"
                    else None
                )
                if function is not None and (function.text or b"") == b"story":
                    exports.append(text)
            else:
                names.append(text)
        if node.type != "export_statement":
            declarations.append((node.text or b"").decode("utf-8"))
    return names, declarations, exports


def story_exports(story_source: str, file: str) -> list[str]:
    """Names of a story file's ``export const X = story(...)`` exports, in file order."""
    return _file_declarations(story_source, file)[2]


def creates_component(record: StoryRecord, stories_root: Path) -> bool:
    """True for the first story export of its file: the story that brings the component into being."""
    exports = story_exports(_read(stories_root, record.file), record.file)
    return not exports or exports[0] == record.export


def _read(stories_root: Path, relative: str) -> str:
    """A story-root file through the file guard: inside the root, a regular file, under the story cap."""
    return files.read_text(relative, root=stories_root, max_bytes=DEFAULT_MAX_BYTES, what="a story file")


def _template_module(imports: list[tuple[str, str]], declarations: list[str]) -> str:
    template_imports = [text for specifier, text in imports if specifier != TESTING_MODULE]
    exported = [f"export {text}" for text in declarations]
    return "\n".join(template_imports) + "\n\n" + "\n\n".join(exported) + "\n"


def reference_solution(record: StoryRecord, stories_root: Path) -> Solution:
    """Build the sandbox files of a story's reference solution (paths relative to the stories root).

    A story that creates its component writes styles, template module and story; a later story of
    the same file finds the component's styles and whole template module given (``Solution.given``)
    and writes the story alone.
    """
    story_source = _read(stories_root, record.file)
    imports = _import_statements(story_source, record.file)
    names, declarations, story_export = _split_template_source(record.template_source, record.file)
    directory = PurePosixPath(record.file).parent
    template_path = str(directory / f"{record.component}.template.tsx") if declarations else None
    story_path = str(directory / f"{kebab_case(record.export)}.stories.tsx")
    styles = {style_file: _read(stories_root, style_file) for style_file in record.style_files}

    story_imports = [text for _, text in imports]
    if template_path is not None:
        story_imports.append(f"import {{ {', '.join(names)} }} from './{PurePosixPath(template_path).name}'")
    story_text = "\n".join(story_imports) + "\n\n" + story_export + "\n"
    if creates_component(record, stories_root):
        files = dict(styles)
        if template_path is not None:
            files[template_path] = _template_module(imports, declarations)
        files[story_path] = story_text
        return Solution(
            files=files, template_path=template_path, style_paths=tuple(record.style_files), story_path=story_path
        )
    given = dict(styles)
    if template_path is not None:
        _, all_declarations, _ = _file_declarations(story_source, record.file)
        given[template_path] = _template_module(imports, all_declarations)
    return Solution(
        files={story_path: story_text}, template_path=None, style_paths=(), story_path=story_path, given=given
    )


def module_signatures(source: str, file: str) -> list[str]:
    """``Name: Type`` (or ``Name`` when untyped) of each ``export const``, in order.

    What a prompt tells the agent it may import: the type annotation of a function template
    (``FT<{ id: string; open?: string[] }>``) is the list of arguments its story may pass.
    """
    tree = parse_tsx(source.encode("utf-8"), file)
    signatures: list[str] = []
    for node in tree.root_node.named_children:
        declaration = node.child_by_field_name("declaration") if node.type == "export_statement" else None
        if declaration is not None and declaration.type == "lexical_declaration":
            for declarator in declaration.named_children:
                name = declarator.child_by_field_name("name") if declarator.type == "variable_declarator" else None
                if name is not None and name.type == "identifier":
                    annotation = declarator.child_by_field_name("type")
                    text = (name.text or b"").decode("utf-8")
                    if annotation is not None:
                        text += " ".join((annotation.text or b"").decode("utf-8").split())
                    signatures.append(text)
    return signatures


def module_exports(source: str, file: str) -> list[str]:
    """Names a module exports with ``export const``, in order."""
    return [signature.split(":", 1)[0] for signature in module_signatures(source, file)]
