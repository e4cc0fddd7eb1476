"""Frozen dataclasses for tool declarations, built only from data the format schema accepted.

Attribute names are snake_case; ``raw`` keeps the declaration exactly as written (camelCase). The
nested values (schemas, transforms, options) are plain JSON data: treat them as read-only.
Exporters and other consumers copy before they change anything.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from toolctl.diagnostics import Location
from toolctl.yamlsrc import Document, JsonPath

PHASES = ("input", "inputDelta", "output", "error", "approval", "suspend", "resume")
TARGETS = ("display", "transcript")
HOOK_NAMES = ("onInputStart", "onInputDelta", "onInputAvailable", "onOutput")
EMPTY_INPUT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


@functools.cache
def format_schema() -> dict[str, Any]:
    """The JSON Schema of the tool file format v1 (the one the loader enforces)."""
    from importlib import resources  # here: a cached load never reads the format schema

    text = resources.files("toolctl.spec").joinpath("tool.v1.schema.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@dataclass(frozen=True)
class Origin:
    """Where a tool came from: a file (``kind='file'``) or an installed pack (``'package'``)."""

    kind: str
    name: str
    file: str

    def __str__(self) -> str:
        return self.file if self.kind == "file" else f"{self.name} ({self.file})"


@dataclass(frozen=True, eq=False, slots=True)
class ToolSpec:
    """One tool declaration, validated and resolved.

    ``input_schema`` and the other schemas are *bundled*: references to schema files in the
    registry are pulled into the schema's own ``$defs``, so each is self-contained.

    Slots, not a ``__dict__``: a registry holds one per tool (a dict of some forty fields was
    about 1.2 KiB of every tool's memory). Empty defaults (``{}``, ``()``) may be shared
    between tools: like the rest, they are read-only.
    """

    name: str
    description: str
    raw: dict[str, Any]
    origin: Origin
    location: Location
    document: Document | None = field(default=None, repr=False)
    pointer: JsonPath = ()
    title: str | None = None
    handler: str | None = None
    version: str | None = None
    input_schema: dict[str, Any] = field(default_factory=lambda: dict(EMPTY_INPUT_SCHEMA))
    output_schema: dict[str, Any] | bool | None = None
    output_validation: str = "strict"
    apply_defaults: bool = True
    strict: bool = False
    require_approval: bool = False  # true, or conditional (``approval_when``)
    approval_when: dict[str, Any] | bool | None = None  # requireApproval: {when: ...}, bundled
    suspend_schema: dict[str, Any] | bool | None = None
    resume_schema: dict[str, Any] | bool | None = None
    # client requests (``ctx.ask``'s shape) answered before the handler runs, by key
    input_requests: dict[str, Any] | None = None
    request_context_schema: dict[str, Any] | bool | None = None
    to_model_output: dict[str, Any] | None = None
    transform: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    annotations: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] | None = None
    icons: tuple[dict[str, Any], ...] = ()
    provider_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    input_examples: tuple[dict[str, Any], ...] = ()
    background: bool = False
    background_timeout: float | None = None
    hooks: dict[str, str] = field(default_factory=dict)
    timeout: float | None = None
    calls_per_minute: int | None = None  # limits.callsPerMinute (the tool's own, not the default)
    isolation: str = "inprocess"
    metadata: dict[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    loading: str | None = None  # as written; toolctl.catalog.loading_of decides the effective one
    toolset: str | None = None
    scopes: tuple[str, ...] = ()  # OAuth scopes a caller's token needs to see and call it
    enabled: bool = True
    tests: tuple[dict[str, Any], ...] = ()
    http: dict[str, Any] | None = None  # the built-in HTTP handler's request (imported tools)
    upstream: dict[str, Any] | None = None  # another MCP server's tool (imported tools)
    secrets: tuple[str, ...] = ()  # environment variables holding credentials
    extensions: dict[str, Any] = field(default_factory=dict)
    _digest: str | None = field(default=None, init=False, repr=False)  # see digest

    @classmethod
    def from_validated(
        cls,
        raw: dict[str, Any],
        *,
        origin: Origin,
        location: Location,
        document: Document | None = None,
        pointer: JsonPath = (),
        schemas: dict[str, Any] | None = None,
    ) -> ToolSpec:
        """Build from a declaration that passed the format schema.

        ``schemas`` overrides the schema keys (inputSchema, ...) with their bundled forms.
        """
        get = (schemas or _EMPTY).get
        background = raw.get("background", False)
        bg_conf = background if isinstance(background, dict) else {}
        mcp = raw.get("mcp", _EMPTY)
        return cls(
            name=raw["name"],
            description=raw["description"],
            raw=raw,
            origin=origin,
            location=location,
            document=document,
            pointer=pointer,
            title=raw.get("title") or mcp.get("annotations", {}).get("title"),
            handler=raw.get("handler"),
            version=raw.get("version"),
            input_schema=get("inputSchema", raw.get("inputSchema", dict(EMPTY_INPUT_SCHEMA))),
            output_schema=get("outputSchema", raw.get("outputSchema")),
            output_validation=raw.get("outputValidation", "strict"),
            apply_defaults=raw.get("applyDefaults", True),
            strict=raw.get("strict", False),
            require_approval=bool(raw.get("requireApproval", False)),
            approval_when=_approval_when(raw, get),
            suspend_schema=get("suspendSchema", raw.get("suspendSchema")),
            resume_schema=get("resumeSchema", raw.get("resumeSchema")),
            input_requests=raw.get("inputRequests"),
            request_context_schema=get("requestContextSchema", raw.get("requestContextSchema")),
            to_model_output=raw.get("toModelOutput"),
            transform=raw.get("transform", _EMPTY),
            annotations=mcp.get("annotations", _EMPTY),
            meta=mcp.get("_meta"),
            icons=tuple(mcp.get("icons", ())),
            provider_options=raw.get("providerOptions", _EMPTY),
            input_examples=tuple(raw.get("inputExamples", ())),
            background=bg_conf.get("enabled", True) if bg_conf else bool(background),
            background_timeout=bg_conf.get("timeout"),
            hooks=raw.get("hooks", _EMPTY),
            timeout=raw.get("timeout"),
            calls_per_minute=raw.get("limits", {}).get("callsPerMinute"),
            isolation=raw.get("isolation", "inprocess"),
            metadata=raw.get("metadata", _EMPTY),
            tags=tuple(raw.get("tags", ())),
            loading=raw.get("loading"),
            toolset=raw.get("toolset"),
            scopes=tuple(raw.get("scopes", ())),
            enabled=raw.get("enabled", True),
            tests=tuple(raw.get("tests", ())),
            http=raw.get("http"),
            upstream=raw.get("upstream"),
            secrets=tuple(raw.get("secrets", ())),
            extensions=_extensions(raw),
        )

    def locate(self, *path: str | int, key: bool = False) -> Location:
        """Location of ``path`` inside this declaration (e.g. ``"inputSchema", "properties"``).

        Falls back to the nearest written ancestor, then to the declaration itself.
        """
        if self.document is None:
            return self.location
        line, col = self.document.locate((*self.pointer, *path), key=key)
        return Location(self.location.file, line, col)

    def check_enabled(self, action: str = "run") -> None:
        """Raise :class:`~toolctl.errors.DisabledToolError`, located at the ``enabled:`` line,
        when the tool is disabled; ``action`` says what was asked ("run", "serve", "test")."""
        if not self.enabled:
            from toolctl.errors import DisabledToolError

            where = self.locate("enabled", key=True)
            raise DisabledToolError(
                f"tool {self.name!r} is disabled (enabled: false at {where})",
                hint=f"set enabled: true to {action} it",
            )

    @property
    def digest(self) -> str:
        """SHA-256 of the canonical declaration (with bundled schemas): changes when it changes."""
        if self._digest is None:
            object.__setattr__(self, "_digest", self._compute_digest())  # frozen: set once
        assert self._digest is not None
        return self._digest

    def _compute_digest(self) -> str:
        schemas = [
            self.input_schema,
            self.output_schema,
            self.suspend_schema,
            self.resume_schema,
            self.request_context_schema,
        ]
        if self.approval_when is not None:  # only then: every other tool's digest stays as it was
            schemas.append(self.approval_when)
        canon = {"raw": self.raw, "schemas": schemas}
        blob = json.dumps(canon, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def schema(self, key: str) -> Any:
        """A schema by its format key (``inputSchema``, ``outputSchema``, ...)."""
        return {
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "suspendSchema": self.suspend_schema,
            "resumeSchema": self.resume_schema,
            "requestContextSchema": self.request_context_schema,
        }[key]


# The one empty mapping of every tool without the key (read-only, as all of a spec's data): an
# empty dict per field per tool was a few hundred bytes of each tool of a large registry.
_EMPTY: dict[str, Any] = {}


def _extensions(raw: dict[str, Any]) -> dict[str, Any]:
    """The declaration's ``x-`` keys (most declarations have none: the shared empty dict)."""
    found = {k: v for k, v in raw.items() if k.startswith("x-")}
    return found or _EMPTY


def _approval_when(raw: dict[str, Any], get: Any) -> dict[str, Any] | bool | None:
    """The ``when`` schema of a conditional ``requireApproval`` (bundled when it was), else
    None (approval always or never)."""
    declared = raw.get("requireApproval")
    if not isinstance(declared, dict):
        return None
    when: dict[str, Any] | bool = get(APPROVAL_WHEN, declared["when"])
    return when


APPROVAL_WHEN = "requireApproval.when"  # the bundled-schemas key of the approval condition

SCHEMA_KEYS = (
    "inputSchema",
    "outputSchema",
    "suspendSchema",
    "resumeSchema",
    "requestContextSchema",
)
