"""The tool file format: its JSON Schema and the typed model built from validated data."""

from toolctl.spec.model import (
    HOOK_NAMES,
    PHASES,
    SCHEMA_KEYS,
    TARGETS,
    Origin,
    ToolSpec,
    format_schema,
)

__all__ = ["HOOK_NAMES", "PHASES", "SCHEMA_KEYS", "TARGETS", "Origin", "ToolSpec", "format_schema"]
