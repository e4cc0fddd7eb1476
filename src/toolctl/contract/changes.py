"""The change classes, the change codes, and the :class:`Change` record every diff yields."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from toolctl.diagnostics import Severity
from toolctl.yamlsrc import JsonPath


class Kind(str, enum.Enum):
    """What a change means for the people and programs that rely on the contract."""

    BREAKING = "breaking"  # former calls fail, or callers get what they never got before
    SEMVER = "semver"  # the declared version does not match the changes
    SAFETY = "safety"  # the tool became riskier: it needs re-approval
    UNDECIDED = "undecided"  # cannot be decided from the schemas: a reviewer must look
    TEXT = "text"  # model-visible text: changes model behaviour
    COMPATIBLE = "compatible"  # former calls and readers keep working
    OTHER = "other"  # outside the call contract (icons, _meta, tests, metadata, ...)

    @property
    def rank(self) -> int:
        """Order for sorting and summaries (most serious first)."""
        return list(Kind).index(self)


@dataclass(frozen=True)
class Code:
    """A change code: stable id, short name, default kind and one-line summary."""

    code: str
    name: str
    kind: Kind
    summary: str


_TABLE = [
    Code("TD101", "tool-removed", Kind.BREAKING, "A tool was removed or disabled."),
    Code("TD102", "tool-renamed", Kind.BREAKING, "A tool was renamed (same contract)."),
    Code("TD103", "tool-added", Kind.COMPATIBLE, "A new tool."),
    Code("TD111", "input-narrowed", Kind.BREAKING, "The input refuses calls it accepted."),
    Code("TD112", "input-widened", Kind.COMPATIBLE, "The input accepts more calls."),
    Code("TD113", "output-widened", Kind.BREAKING, "The output may hold values it never held."),
    Code("TD114", "output-narrowed", Kind.COMPATIBLE, "The output holds fewer kinds of values."),
    Code("TD115", "schema-undecided", Kind.UNDECIDED, "A schema change that cannot be decided."),
    Code("TD116", "strict-changed", Kind.BREAKING, "Strict mode was switched."),
    Code("TD117", "output-validation-loosened", Kind.BREAKING, "Output is no longer enforced."),
    Code("TD118", "background-changed", Kind.BREAKING, "Calls now run in the background."),
    Code("TD119", "schema-text", Kind.TEXT, "Model-visible text inside a schema changed."),
    Code("TD201", "read-only-dropped", Kind.SAFETY, "readOnlyHint true → false."),
    Code("TD202", "destructive-added", Kind.SAFETY, "destructiveHint false → true."),
    Code("TD203", "open-world-added", Kind.SAFETY, "openWorldHint false → true."),
    Code("TD204", "idempotent-dropped", Kind.SAFETY, "idempotentHint true → false."),
    Code("TD205", "approval-removed", Kind.SAFETY, "requireApproval was removed."),
    Code("TD206", "isolation-loosened", Kind.SAFETY, "isolation subprocess → inprocess."),
    Code("TD207", "timeout-loosened", Kind.SAFETY, "The timeout was raised or removed."),
    Code("TD208", "handler-changed", Kind.SAFETY, "Another handler runs the tool."),
    Code("TD209", "poisoned-text", Kind.SAFETY, "New model-visible text has poisoning signs."),
    Code("TD210", "read-only-claimed", Kind.SAFETY, "readOnlyHint false → true."),
    Code("TD211", "destructive-dropped", Kind.SAFETY, "destructiveHint true → false."),
    Code("TD212", "open-world-dropped", Kind.SAFETY, "openWorldHint true → false."),
    Code("TD213", "idempotent-claimed", Kind.SAFETY, "idempotentHint false → true."),
    Code(
        "TD214",
        "approval-made-conditional",
        Kind.SAFETY,
        "requireApproval true → {when}: some calls run unapproved.",
    ),
    Code(
        "TD215",
        "approval-condition-changed",
        Kind.SAFETY,
        "The requireApproval.when condition changed (it may match fewer calls).",
    ),
    Code("TD216", "rate-limit-loosened", Kind.SAFETY, "limits.callsPerMinute raised or removed."),
    Code("TD217", "scopes-dropped", Kind.SAFETY, "An OAuth scope the tool required was removed."),
    Code("TD301", "description-changed", Kind.TEXT, "The description changed."),
    Code("TD302", "title-changed", Kind.TEXT, "The title changed."),
    Code("TD303", "examples-changed", Kind.TEXT, "inputExamples changed."),
    Code("TD304", "model-output-changed", Kind.TEXT, "toModelOutput changed."),
    Code("TD401", "major-bump-missing", Kind.SEMVER, "A breaking change without a major bump."),
    Code("TD402", "minor-bump-missing", Kind.SEMVER, "A compatible change without a minor bump."),
    Code("TD403", "version-invalid", Kind.SEMVER, "The version went down or is not semver."),
    Code("TD501", "metadata-changed", Kind.OTHER, "Client-visible metadata changed."),
    Code(
        "TD502", "declaration-changed", Kind.OTHER, "The declaration changed outside the contract."
    ),
    Code("TD503", "hint-tightened", Kind.COMPATIBLE, "A safety policy was tightened."),
    Code("TD504", "version-changed", Kind.OTHER, "The declared version changed."),
]
CODES: dict[str, Code] = {c.code: c for c in _TABLE}

SEVERITY = {
    Kind.BREAKING: Severity.ERROR,
    Kind.SAFETY: Severity.ERROR,
    Kind.SEMVER: Severity.ERROR,
    Kind.UNDECIDED: Severity.WARNING,
    Kind.TEXT: Severity.WARNING,
    Kind.COMPATIBLE: Severity.INFO,
    Kind.OTHER: Severity.INFO,
}


@dataclass(frozen=True)
class Change:
    """One classified difference of ``tool`` at ``path`` (a path inside the declaration).

    ``old``/``new`` carry the two texts of a text change (for the text diff).
    """

    tool: str
    code: str
    kind: Kind
    message: str
    path: JsonPath = ()
    old: Any = None
    new: Any = None

    @property
    def name(self) -> str:
        return CODES[self.code].name

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``--format json``)."""
        from toolctl.diagnostics import json_pointer

        data: dict[str, Any] = {
            "tool": self.tool,
            "code": self.code,
            "name": self.name,
            "class": self.kind.value,
            "message": self.message,
            "pointer": json_pointer(self.path),
        }
        if self.kind is Kind.TEXT and (isinstance(self.old, str) or isinstance(self.new, str)):
            data["old"], data["new"] = self.old, self.new
        return data


def change(
    tool: str,
    code: str,
    message: str,
    path: JsonPath = (),
    *,
    kind: Kind | None = None,
    old: Any = None,
    new: Any = None,
) -> Change:
    """A :class:`Change` with the code's default kind unless ``kind`` is given."""
    return Change(tool, code, kind or CODES[code].kind, message, path, old, new)
