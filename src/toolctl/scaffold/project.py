"""``toolctl init``: the files of a new, working project.

A configuration, one example tool with its handler module and tests, the tool format's JSON
Schema for editors (the first line of the tool file points at it), and a ``.gitignore`` entry
for the run-history directory. :func:`init_files` returns what to write; :func:`init_project`
writes it, refusing when any of the files exists already.
"""

from __future__ import annotations

import json
from pathlib import Path

from toolctl.errors import UsageError
from toolctl.scaffold.render import SCHEMA_FILE, modeline

STATE_DIR = ".toolctl/"
GITIGNORE = f"# toolctl run history (see `state` in toolctl.yaml)\n{STATE_DIR}\n"

CONFIG = """\
# toolctl project: where the tools live, where their handlers are imported from, and where
# run history is kept. Paths are relative to this file.
tools: tools.d
pythonPath: [handlers, .]
state: .toolctl/state.db
"""

EXAMPLE_TOOL = """\
toolctl: 1
name: greet
title: Greet someone
description: >-
  Write a short greeting for a person, in English or Spanish. Use it when the user asks to
  greet or welcome someone by name.
handler: greeting:greet
inputSchema:
  type: object
  properties:
    name: {type: string, minLength: 1, maxLength: 100, description: Who to greet.}
    language:
      type: string
      enum: [en, es]
      default: en
      description: The language of the greeting.
  required: [name]
  additionalProperties: false
outputSchema:
  type: object
  properties:
    greeting: {type: string}
  required: [greeting]
  additionalProperties: false
mcp:
  annotations: {readOnlyHint: true, openWorldHint: false}
tests:
  - name: english by default
    input: {name: Ada}
    output: {greeting: "Hello, Ada!"}
  - name: spanish
    input: {name: Ada, language: es}
    output: {greeting: "¡Hola, Ada!"}
  - name: a name is required
    input: {language: en}
    error: {code: invalid_input}
"""

EXAMPLE_HANDLER = '''\
"""The handler of tools.d/greet.yaml: it receives the validated input as a dict, with the
inputSchema's defaults filled in (so input["language"] is always there)."""

from __future__ import annotations

from typing import Any

GREETINGS = {"en": "Hello, {name}!", "es": "¡Hola, {name}!"}


def greet(input: dict[str, Any]) -> dict[str, Any]:
    """Greet input["name"] in input["language"]."""
    template = GREETINGS[input["language"]]
    return {"greeting": template.format(name=input["name"])}
'''


def init_files(root: Path) -> dict[Path, str]:
    """path → text of every file ``toolctl init`` creates in ``root`` (.gitignore excluded)."""
    from toolctl.spec import format_schema

    return {
        root / "toolctl.yaml": CONFIG,
        root / "tools.d" / "greet.yaml": modeline(f"../{SCHEMA_FILE}") + EXAMPLE_TOOL,
        root / "handlers" / "greeting.py": EXAMPLE_HANDLER,
        root / SCHEMA_FILE: json.dumps(format_schema(), indent=2) + "\n",
    }


def init_project(root: Path, *, force: bool = False) -> list[Path]:
    """Create a project in ``root``; the paths written (.gitignore when it was changed).

    Raises :class:`UsageError` and writes nothing when a file to create exists (unless
    ``force``: then they are overwritten), or when ``[tool.toolctl]`` in pyproject.toml
    already configures ``root``.
    """
    from toolctl.scaffold.newtool import refuse_dangling, write_files

    if (root.exists() or root.is_symlink()) and not root.is_dir():  # a symlink loop too
        raise UsageError(f"{root}: not a directory", hint="give a directory: toolctl init DIR")
    files = init_files(root)
    refuse_dangling([*files, root / ".gitignore"])
    existing = [p for p in files if _blocked(p, root)]
    if existing and not (force and all(p.is_file() for p in existing)):
        names = ", ".join(p.relative_to(root).as_posix() for p in existing)
        raise UsageError(
            f"{root}: not initialising over existing files: {names}",
            hint="run toolctl init in an empty directory, give a new one (toolctl init DIR), or "
            "overwrite them with toolctl init --force",
        )
    if _configured_by_pyproject(root):
        raise UsageError(
            f"{root / 'pyproject.toml'} already configures toolctl ([tool.toolctl])",
            hint="this is a toolctl project already: add tools with toolctl new",
        )
    written = write_files(files, force=force)
    try:
        if _add_gitignore(root / ".gitignore"):
            written.append(root / ".gitignore")
    except OSError as exc:
        raise UsageError(
            f"cannot update {root / '.gitignore'}: {exc.strerror or exc}",
            hint=f"the project was created; add {STATE_DIR} to .gitignore yourself",
        ) from None
    return written


def _blocked(path: Path, root: Path) -> bool:
    """Whether ``path`` exists, or a file stands where one of its directories must be."""
    if path.exists() or path.is_symlink():
        return True
    return any(
        p.exists() and not p.is_dir() for p in path.parents if p != root and root in p.parents
    )


def _configured_by_pyproject(root: Path) -> bool:
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return False
    return "[tool.toolctl" in pyproject.read_text("utf-8", errors="replace")


def _add_gitignore(path: Path) -> bool:
    """Add the state directory to ``path`` (created if absent); False when already listed."""
    text = path.read_text("utf-8") if path.is_file() else ""
    entries = {line.strip().rstrip("/") for line in text.splitlines()}
    if STATE_DIR.rstrip("/") in entries or f"/{STATE_DIR.rstrip('/')}" in entries:
        return False
    separator = "\n" if text and not text.endswith("\n") else ""
    path.write_text(text + separator + ("\n" if text else "") + GITIGNORE, encoding="utf-8")
    return True
