"""Tool-name and description rules per target (see provider-formats.md §0)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from toolctl.export.base import Findings

META_KEY = "dev.toolctl/contractDigest"
"""The ``_meta`` key (MCP reverse-DNS naming) under which tools/list carries a tool's digest
(:func:`toolctl.contract.contract_digest`); here, not in :mod:`toolctl.contract`, so that the MCP
exporter's checks (every `lint` runs them) do not import the diff and lock file machinery."""


@dataclass(frozen=True)
class NameRule:
    """A target's rule for tool names: a full-match regex and how to say it to a person."""

    pattern: str
    explain: str

    @functools.cached_property
    def _fullmatch(self) -> Callable[[str], re.Match[str] | None]:
        return re.compile(self.pattern).fullmatch  # compiled once: every export asks per tool

    def check(self, name: str, out: Findings) -> None:
        """Report an error when ``name`` breaks the rule."""
        if not self._fullmatch(name):
            out.error(
                "TX200",
                f"name {name!r} breaks the rule {self.pattern} ({self.explain})",
                ("name",),
                hint="rename the tool (letters, digits, '_' and '-', starting "
                "with a letter, at most 64 characters, is accepted everywhere) or leave it "
                "out with --tool/--tag",
            )


OPENAI_NAME = NameRule(r"[a-zA-Z0-9_-]{1,64}", "letters, digits, '_' and '-', at most 64")
ANTHROPIC_NAME = OPENAI_NAME
BEDROCK_NAME = OPENAI_NAME
MISTRAL_NAME = OPENAI_NAME
GEMINI_NAME = NameRule(
    r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}",
    "a letter or '_' first, then letters, digits, '_', '.', '-', at most 64",
)
MCP_NAME = NameRule(r"[A-Za-z0-9._-]{1,128}", "letters, digits, '_', '.', '-', at most 128")

OPENAI_DESCRIPTION_LIMIT = 1024


def check_mcp_name_edges(name: str, out: Findings) -> None:
    """SEP-986 (and the MCP SDK) warn about a name that starts or ends with '-' or '.'."""
    if name[:1] in "-." or name[-1:] in "-.":
        out.warning(
            "TX201",
            f"name {name!r} starts or ends with '-' or '.', which MCP clients may reject",
            ("name",),
        )


def check_description_length(description: str, limit: int, out: Findings) -> None:
    """Warn when a description is longer than the target is known to accept."""
    if len(description) > limit:
        out.warning(
            "TX202",
            f"description has {len(description)} characters; the API rejects more than {limit}",
            ("description",),
            hint="shorten the description",
        )
