"""The shapes every lint rule shares: :class:`Rule`, the :class:`Hit` it yields, and rule sets.

A rule is one small function with a stable code (``TL###``), a family, a default severity, a
one-line summary and a documentation entry (``toolctl lint --explain CODE``). Tool rules take
``(tool, ctx)``; registry rules take ``(tools, ctx)`` and look across tools. A rule yields
:class:`Hit` objects: where (a path inside the declaration), what is wrong, and the fix. The engine
turns hits into :class:`~toolctl.diagnostics.Diagnostic` objects with the configured severity.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from toolctl.diagnostics import Location, Severity
from toolctl.yamlsrc import JsonPath

if TYPE_CHECKING:
    from toolctl.lint.context import LintContext
    from toolctl.spec import ToolSpec

FAMILIES = (
    "descriptions",
    "schemas",
    "providers",
    "annotations",
    "examples",
    "security",
    "size",
    "resolve",
    "engine",
)
"""Rule families, in catalogue order; each is also a selector in the configuration."""

Scope = Literal["tool", "registry"]


@dataclass(frozen=True)
class Hit:
    """One finding of a rule: ``path`` inside ``tool``'s declaration, a message and the fix.

    ``key=True`` points at the mapping key of ``path`` rather than its value (for unknown
    keywords and property names). ``loc`` overrides the location entirely.
    """

    tool: ToolSpec | None
    path: JsonPath
    message: str
    hint: str | None = None
    key: bool = False
    loc: Location | None = None
    extra: dict[str, Any] = field(default_factory=dict)


ToolCheck = Callable[["ToolSpec", "LintContext"], Iterable[Hit]]
RegistryCheck = Callable[[Sequence["ToolSpec"], "LintContext"], Iterable[Hit]]


@dataclass(frozen=True)
class Rule:
    """A lint rule: identity, documentation and the check function."""

    code: str
    name: str
    family: str
    severity: Severity
    summary: str
    explain: str
    check: Callable[..., Iterable[Hit]] = field(repr=False, compare=False)
    scope: Scope = "tool"
    # A tool rule that also reads the other tools or the project's toolsets: its findings on a
    # tool can change while the tool does not, so lint never remembers them (see engine).
    peers: bool = False


class RuleSet:
    """The rules of one module (a family): what a ``toolctl.lint_rules`` entry point names.

    Third-party packs build one the same way and declare it in their own ``pyproject.toml``::

        [project.entry-points."toolctl.lint_rules"]
        mypack = "mypack.lint:RULES"
    """

    def __init__(self, family: str) -> None:
        self.family = family
        self.rules: list[Rule] = []

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def _add(
        self, code: str, name: str, severity: Severity, summary: str, scope: Scope, peers: bool
    ) -> Callable[[Callable[..., Iterable[Hit]]], Callable[..., Any]]:
        def decorate(fn: Callable[..., Iterable[Hit]]) -> Callable[..., Any]:
            doc = inspect.cleandoc(fn.__doc__ or summary)
            rule = Rule(code, name, self.family, severity, summary, doc, fn, scope, peers)
            self.rules.append(rule)
            return fn

        return decorate

    def tool(
        self, code: str, name: str, severity: Severity, summary: str, *, peers: bool = False
    ) -> Callable[[Callable[..., Iterable[Hit]]], Callable[..., Any]]:
        """Register a per-tool rule: ``fn(tool, ctx) -> Iterable[Hit]``; its docstring explains.

        ``peers=True`` when it also reads other tools (``ctx.tools``, ``ctx.names``) or the
        project's toolsets (``ctx.toolsets``): what it finds on a tool is then never remembered
        between runs.
        """
        return self._add(code, name, severity, summary, "tool", peers)

    def registry(
        self, code: str, name: str, severity: Severity, summary: str
    ) -> Callable[[Callable[..., Iterable[Hit]]], Callable[..., Any]]:
        """Register a rule over all tools: ``fn(tools, ctx) -> Iterable[Hit]``."""
        return self._add(code, name, severity, summary, "registry", True)
