"""The exporter contract: options, results, findings, and the base class every target builds on.

An exporter turns tool declarations into the JSON one provider API (or an MCP client) takes. It is
a pure function of its input: no I/O, no environment, no mutation of the specs. Whatever it had to
change or drop is reported as a :class:`~toolctl.diagnostics.Diagnostic`:

* **error**: the export cannot mean what the YAML says (an open map under strict mode, a name the
  provider rejects, recursion the target forbids). Nothing is exported.
* **warning**: a *lossy* step (a constraint dropped, ``oneOf`` loosened to ``anyOf``). ``--check``
  turns these into errors.
* **info**: a faithful rewrite worth knowing (``$ref`` inlined, optional made nullable for
  OpenAI strict mode, examples with no field on this target).

Entries are built copy-on-write: a conversion step copies only the node it changes, and whatever
it leaves alone is shared with the spec (read-only). :meth:`ToolListExporter.export` detaches the
result with one deep copy; :meth:`ToolListExporter.check` runs the very same code and keeps only
the findings, so it copies nothing (``lint`` calls it for every tool and provider).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from toolctl.diagnostics import (
    Diagnostic,
    Severity,
    error,
    has_errors,
    json_pointer,
    sorted_unique,
    warning,
)
from toolctl.spec import ToolSpec

if TYPE_CHECKING:
    from toolctl.catalog import Toolset

JsonPath = tuple[str | int, ...]


@dataclass(frozen=True)
class ExportOptions:
    """What the caller asked for; every exporter accepts all of these and ignores what it lacks.

    ``extra`` holds options a third-party exporter defines (``Registry.export(fmt, foo=1)``).
    """

    examples_in_description: bool = False
    gemini_parameters: str = "json-schema"  # or "openapi": the OpenAPI-subset ``parameters``
    mcp_protocol: str = "2025-11-25"
    check: bool = False
    # False: leave out info findings (faithful rewrites) for a caller that acts only on errors
    # and warnings (the lint provider rules: building them was a fifth of their time).
    infos: bool = True
    # The declared toolsets (``toolsets:`` in toolctl.yaml): what a tool's loading and
    # namespace come from. export_result fills it in from a registry.
    catalog: Mapping[str, Toolset] = field(default_factory=dict)
    # anthropic: which tool search tool lists deferred tools ("bm25" or "regex")
    tool_search: str = "bm25"
    # Toolsets whose tools the model may call, through the provider's allowed-names mechanism
    # (OpenAI tool_choice allowed_tools, Gemini allowedFunctionNames); the rest stay listed.
    allowed_toolsets: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> ExportOptions:
        """Known keyword options become fields; unknown ones go to ``extra``."""
        known = {k: kwargs.pop(k) for k in list(kwargs) if k in cls.__dataclass_fields__}
        known.pop("extra", None)
        return cls(**known, extra=kwargs)


@dataclass
class ExportResult:
    """The exported JSON ``data`` (what the CLI prints) and every finding about it."""

    format: str
    data: Any
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing is an error (with ``check``, warnings already became errors)."""
        return not has_errors(self.diagnostics)


class Findings:
    """Collects diagnostics for one tool, located at paths inside its declaration.

    ``checking``: only the findings are wanted (:meth:`ToolListExporter.check`), so an entry may
    leave out a value that can produce no finding (the MCP contract digest: hashing the whole
    declaration for every tool was most of what ``lint`` spent on the MCP export).
    """

    def __init__(
        self, spec: ToolSpec, target: str, *, checking: bool = False, infos: bool = True
    ) -> None:
        self.spec = spec
        self.target = target
        self.checking = checking
        self.infos = infos
        self.items: list[Diagnostic] = []

    def add(
        self,
        severity: Severity,
        code: str,
        message: str,
        path: JsonPath = (),
        hint: str | None = None,
    ) -> None:
        """Record a finding at ``path`` (a JSON path inside the declaration)."""
        if severity is Severity.INFO and not self.infos:
            return
        loc = self.spec.locate(*path, key=True)
        pointer = json_pointer(path) or "/"
        self.items.append(
            Diagnostic.at(
                loc,
                severity,
                code,
                f"{self.target}: tool {self.spec.name!r}: {message}",
                pointer=pointer if path else "",
                hint=hint,
                tool=self.spec.name,
            )
        )

    def error(self, code: str, message: str, path: JsonPath = (), hint: str | None = None) -> None:
        self.add(Severity.ERROR, code, message, path, hint)

    def warning(
        self, code: str, message: str, path: JsonPath = (), hint: str | None = None
    ) -> None:
        self.add(Severity.WARNING, code, message, path, hint)

    def info(self, code: str, message: str, path: JsonPath = (), hint: str | None = None) -> None:
        self.add(Severity.INFO, code, message, path, hint)


@runtime_checkable
class Exporter(Protocol):
    """What a ``toolctl.exporters`` entry point names (an object, or a class building one).

    ``export`` gets the selected, enabled specs in name order and must be pure.
    """

    name: str
    description: str

    def export(self, specs: Sequence[ToolSpec], options: ExportOptions) -> ExportResult: ...

    def check(self, spec: ToolSpec, options: ExportOptions) -> list[Diagnostic]: ...


class ToolListExporter:
    """Base for targets whose output is a list of per-tool entries wrapped in a request fragment.

    Subclasses define ``name``, ``description``, ``provider_keys`` (which ``providerOptions``
    sections they merge), ``generated_keys`` (keys providerOptions may not override) and
    :meth:`entry`; they may override :meth:`wrap` and :meth:`finish`.
    """

    name = ""
    description = ""
    label = ""
    provider_keys: tuple[str, ...] = ()
    generated_keys: frozenset[str] = frozenset()
    known_fields: frozenset[str] | None = None  # fields the provider's SDK type declares
    empty_refused: str | None = None  # why the API refuses a request without tools, if it does

    def entry(self, spec: ToolSpec, options: ExportOptions, out: Findings) -> list[Any]:
        """The list entries for one tool (usually one)."""
        raise NotImplementedError

    def wrap(self, entries: list[Any], options: ExportOptions) -> Any:
        """The request fragment around the entries."""
        return {"tools": entries}

    def request(
        self, specs: Sequence[ToolSpec], per_tool: list[list[Any]], options: ExportOptions
    ) -> Any:
        """The request fragment from each tool's entries (``per_tool[i]`` belongs to
        ``specs[i]``): :meth:`wrap` of them all, unless a target groups them (namespaces) or
        adds request-level fields (allowed names)."""
        return self.wrap([e for group in per_tool for e in group], options)

    def finish(self, specs: Sequence[ToolSpec], options: ExportOptions) -> list[Diagnostic]:
        """Findings about the request as a whole (limits summed over tools)."""
        return []

    def _convert(
        self, spec: ToolSpec, options: ExportOptions, *, checking: bool = False
    ) -> tuple[list[Any], list[Diagnostic]]:
        """The entries (sharing unchanged parts with ``spec``: read-only) and the findings."""
        out = Findings(spec, self.label or self.name, checking=checking, infos=options.infos)
        entries = self.entry(spec, options, out)
        return entries, out.items

    def check(self, spec: ToolSpec, options: ExportOptions) -> list[Diagnostic]:
        """Every finding exporting ``spec`` would produce (lossy steps, refusals, name rules).

        The same code path as :meth:`export`, without detaching the entries: nothing is copied.
        """
        return finalize(self._convert(spec, options, checking=True)[1], options)

    def export(self, specs: Sequence[ToolSpec], options: ExportOptions) -> ExportResult:
        """Export ``specs`` (already selected); ``data`` is None when there are errors."""
        return self.export_each(specs, options, detach)

    def export_each(
        self, specs: Sequence[ToolSpec], options: ExportOptions, keep: Callable[[Any], Any]
    ) -> ExportResult:
        """:meth:`export`, with ``keep`` making what the result holds of each tool's entries
        (a detached copy; :mod:`toolctl.export.stream` writes them out as it goes instead, so
        an export holds one tool's entries at a time, not the registry's)."""
        per_tool: list[list[Any]] = []
        diags: list[Diagnostic] = []
        for spec in specs:
            got, found = self._convert(spec, options)
            per_tool.append(keep(got))
            diags.extend(found)
        diags.extend(self.finish(specs, options))
        if not specs:
            why = self.empty_refused
            diags.append(
                (error if why else warning)(
                    None,
                    "TX110",
                    f"{self.label or self.name}: no tools selected" + (f"; {why}" if why else ""),
                    hint="check --tool/--tag, and enabled: false in the tools",
                )
            )
        diags = finalize(diags, options)
        data = None if has_errors(diags) else self.request(specs, per_tool, options)
        return ExportResult(self.name, data, diags)

    def merge_provider_options(
        self,
        spec: ToolSpec,
        target: dict[str, Any],
        out: Findings,
        known: frozenset[str] | None = None,
    ) -> dict[str, Any]:
        """Merge ``providerOptions.<key>`` for this target's keys into ``target`` (in place).

        Keys the exporter generates (name, schema, ...) cannot be overridden: that would make the
        export disagree with the declaration. Returns the merged options.
        """
        merged: dict[str, Any] = {}
        known = known if known is not None else self.known_fields
        for key in self.provider_keys:
            section = spec.provider_options.get(key)
            if not isinstance(section, dict):
                continue
            for opt, value in section.items():
                if opt in self.generated_keys and target.get(opt) == value:
                    out.info(
                        "TX212",
                        f"providerOptions.{key}.{opt} repeats what toolctl generates; ignored",
                        ("providerOptions", key, opt),
                    )
                    continue
                if opt in self.generated_keys:
                    out.error(
                        "TX210",
                        f"providerOptions.{key}.{opt} would override a field "
                        "toolctl generates from the declaration",
                        ("providerOptions", key, opt),
                        hint=f"set it through the tool's own keys, not providerOptions.{key}",
                    )
                    continue
                if known is not None and opt not in known:
                    out.warning(
                        "TX211",
                        f"providerOptions.{key}.{opt} is not a field of a "
                        f"{self.label or self.name} tool; the API may reject it",
                        ("providerOptions", key, opt),
                        hint=f"known fields: {', '.join(sorted(known))}",
                    )
                merged[opt] = value  # shared read-only; export() detaches the entry
        target.update(merged)
        return merged


def detach(value: Any) -> Any:
    """A deep copy of JSON data, so an export never shares an object with the specs.

    One JSON round trip per tool: what the exporters return is JSON by contract.
    """
    return json.loads(json.dumps(value))


def check_choice(what: str, value: str, choices: Sequence[str]) -> list[Diagnostic]:
    """An error when an option ``value`` is not one of ``choices``."""
    if value in choices:
        return []
    return [
        error(
            None,
            "TX100",
            f"{what} {value!r} is not supported",
            hint=f"use one of {', '.join(choices)}",
        )
    ]


def finalize(diags: list[Diagnostic], options: ExportOptions) -> list[Diagnostic]:
    """Sort, de-duplicate, and under ``check`` turn lossy steps (warnings) into errors."""
    if not diags:
        return []  # the usual case for one tool's check
    if options.check:
        diags = [
            replace(
                d,
                severity=Severity.ERROR,
                hint=(d.hint or "")
                + ("; " if d.hint else "")
                + "--check treats lossy export steps as errors",
            )
            if d.severity is Severity.WARNING
            else d
            for d in diags
        ]
    return sorted_unique(diags)
