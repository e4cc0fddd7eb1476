"""A tool's contract: what models and clients rely on, built from a :class:`ToolSpec`.

``contract`` is what tools/list and the provider exports carry, plus the two switches a caller
depends on (``strict``, ``requireApproval``) and what the model sees of the output
(``toModelOutput``). ``runtime`` holds the execution policy a reviewer approved (isolation,
timeout, background, output validation) and the schemas a client fills in (request context,
resume data). A :class:`LockEntry` adds the version, the handler and the two digests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolctl.contract.canonical import digest

if TYPE_CHECKING:
    from toolctl.spec import ToolSpec

JsonDict = dict[str, Any]
META_KEY = "dev.toolctl/contractDigest"
"""The ``_meta`` key (MCP reverse-DNS naming) under which tools/list carries a tool's digest."""

# Keys of `contract` copied from the declaration when present (omitted when absent or empty).
_OPTIONAL = ("title", "outputSchema", "annotations", "icons", "_meta", "inputExamples")


def contract_of(spec: ToolSpec) -> JsonDict:
    """The canonical model-visible contract of ``spec`` (schemas as bundled)."""
    values: JsonDict = {
        "title": spec.title,
        "outputSchema": spec.output_schema,
        "annotations": spec.annotations or None,
        "icons": list(spec.icons) or None,
        "_meta": spec.meta or None,
        "inputExamples": list(spec.input_examples) or None,
    }
    contract: JsonDict = {
        "name": spec.name,
        "description": spec.description,
        "inputSchema": spec.input_schema,
        "strict": spec.strict,
        "requireApproval": approval_of(spec),
    }
    contract.update({k: values[k] for k in _OPTIONAL if values[k] is not None})
    if spec.provider_options:
        contract["providerOptions"] = spec.provider_options
    if spec.to_model_output is not None:
        contract["toModelOutput"] = spec.to_model_output
    return contract


def approval_of(spec: ToolSpec) -> bool | JsonDict:
    """``requireApproval`` as the contract holds it: true, false, or ``{when: schema}`` (the
    condition bundled)."""
    if spec.approval_when is not None:
        return {"when": spec.approval_when}
    return spec.require_approval


def runtime_of(spec: ToolSpec) -> JsonDict:
    """The execution policy and client-filled schemas of ``spec``."""
    runtime: JsonDict = {
        "isolation": spec.isolation,
        "timeout": spec.timeout,
        "background": spec.background,
        "outputValidation": spec.output_validation,
    }
    if spec.background_timeout is not None:
        runtime["backgroundTimeout"] = spec.background_timeout
    if spec.calls_per_minute is not None:  # only then: older locks stay as they were
        runtime["callsPerMinute"] = spec.calls_per_minute
    if spec.scopes:  # likewise
        runtime["scopes"] = sorted(set(spec.scopes))
    for key, schema in (
        ("requestContextSchema", spec.request_context_schema),
        ("suspendSchema", spec.suspend_schema),
        ("resumeSchema", spec.resume_schema),
    ):
        if schema is not None:
            runtime[key] = schema
    return runtime


def declaration_digest(spec: ToolSpec) -> str:
    """Digest of the whole declaration as written, with its bundled schemas."""
    schemas = [
        spec.input_schema,
        spec.output_schema,
        spec.suspend_schema,
        spec.resume_schema,
        spec.request_context_schema,
    ]
    return digest({"raw": spec.raw, "schemas": schemas})


def builtin_handler(spec: ToolSpec) -> str | None:
    """What runs a tool without a ``handler``: its ``http:`` request or ``upstream:`` tool,
    readable, with a digest of the whole block and the ``secrets`` it sends. Locked as the
    tool's handler, so pointing it at another host or server is a ``safety`` change (TD208),
    not an ``other`` one."""
    if spec.http is not None:
        block: dict[str, Any] = spec.http
        where = block.get("baseUrl") or f"${block.get('baseUrlEnv')}"
        shown = f"http {block.get('method')} {where}{block.get('path')}"
    elif spec.upstream is not None:
        block = spec.upstream
        server = block.get("url") or " ".join(
            [str(block.get("command")), *map(str, block.get("args", []))]
        )
        shown = f"mcp {server} :: {block.get('tool')}"
    else:
        return None
    return f"{shown} #{digest({'block': block, 'secrets': list(spec.secrets)})[7:19]}"


def contract_digest(spec: ToolSpec) -> str:
    """Digest of :func:`contract_of` (what ``_meta["dev.toolctl/contractDigest"]`` carries)."""
    return digest(contract_of(spec))


@dataclass(frozen=True)
class LockEntry:
    """One tool as locked: version, handler, contract, runtime policy and digests.

    ``raw`` (the declaration) is known only for a side loaded from files; an entry read from a
    lock file has ``raw=None`` and is compared through its digests.
    """

    name: str
    contract: JsonDict
    runtime: JsonDict
    version: str | None = None
    handler: str | None = None
    contract_digest: str = ""
    declaration_digest: str = ""
    raw: JsonDict | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, spec: ToolSpec) -> LockEntry:
        """The entry for a loaded tool."""
        contract = contract_of(spec)
        return cls(
            name=spec.name,
            contract=contract,
            runtime=runtime_of(spec),
            version=spec.version,
            handler=spec.handler or builtin_handler(spec),
            contract_digest=digest(contract),
            declaration_digest=declaration_digest(spec),
            raw=spec.raw,
        )

    def to_json(self) -> JsonDict:
        """The entry as written in ``toolctl.lock`` (under its name)."""
        return {
            "version": self.version,
            "handler": self.handler,
            "contractDigest": self.contract_digest,
            "declarationDigest": self.declaration_digest,
            "contract": self.contract,
            "runtime": self.runtime,
        }
