"""Option types shared by several commands."""

from __future__ import annotations

import enum


class OutputFormat(str, enum.Enum):
    """Human text (default) or JSON for machines."""

    text = "text"
    json = "json"
