"""Which ``providerOptions`` keys mean something: the export formats' names, read without import.

Kept below the exporters so that loading a registry can warn about a misspelt provider
(``openia:``) without importing any exporter: the names come from entry-point metadata.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from toolctl.diagnostics import Diagnostic, warning
from toolctl.spec.model import ToolSpec

GROUP = "toolctl.exporters"
"""Entry-point group of the export formats (built-ins are declared there too)."""
BUILTIN_FORMATS = {
    "anthropic": "toolctl.export.anthropic:EXPORTER",
    "bedrock": "toolctl.export.bedrock:EXPORTER",
    "gemini": "toolctl.export.gemini:EXPORTER",
    "mcp": "toolctl.export.mcp:EXPORTER",
    "mistral": "toolctl.export.mistral:EXPORTER",
    "openai": "toolctl.export.openai:EXPORTER",
    "openai-responses": "toolctl.export.openai_responses:EXPORTER",
}
PROVIDER_ALIASES = frozenset({"google"})
"""``providerOptions`` keys a built-in format reads that are not a format's name (gemini's)."""


def format_names() -> set[str]:
    """The names of the installed export formats, from metadata only (nothing imported)."""
    return set(installed_format_names())


@functools.cache
def installed_format_names() -> frozenset[str]:
    """:func:`format_names`, scanned once (every distribution's metadata: milliseconds, too
    much per tool); a load clears it (``cache_clear``) to see formats installed since."""
    from importlib.metadata import entry_points

    return frozenset({*BUILTIN_FORMATS, *(ep.name for ep in entry_points(group=GROUP))})


def provider_key_problems(spec: ToolSpec, also_known: Iterable[str] = ()) -> list[Diagnostic]:
    """A warning (TC206) for each ``providerOptions`` key that no installed format reads.

    Known keys: every installed format's name, the aliases above, ``also_known`` (a loaded
    exporter's ``provider_keys``), and ``x-`` keys. A typo such as ``openia`` would otherwise
    be dropped from every export without a word.
    """
    if not spec.provider_options:
        return []
    known = sorted({*installed_format_names(), *PROVIDER_ALIASES, *also_known})
    out = []
    for key in spec.provider_options:
        if key in known or key.startswith("x-"):
            continue
        import difflib  # only for an unknown key: a plain load never gets here

        near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        out.append(
            warning(
                spec.locate("providerOptions", key, key=True),
                "TC206",
                f"providerOptions key {key!r} is not a provider any installed export format "
                "reads, so no export uses it",
                hint=f"did you mean {near[0]!r}?" if near else f"known: {', '.join(known)}",
                tool=spec.name,
            )
        )
    return out
