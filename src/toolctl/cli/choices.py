"""The fixed value sets of CLI options, without Typer: the quick path (:mod:`toolctl.cli.quick`)
reads them as Typer's declarations in :mod:`toolctl.cli.options` do."""

from __future__ import annotations

import enum

SEARCH_K_MAX = 1000
"""The most tools ``toolctl search -k`` may ask for."""


class OutputFormat(str, enum.Enum):
    """Human text (default) or JSON for machines."""

    text = "text"
    json = "json"


class ReportFormat(str, enum.Enum):
    """What a command that reports findings (``lint``, ``diff``) prints: text, JSON, Markdown
    (a review comment), SARIF (code scanning) or GitHub workflow annotations."""

    text = "text"
    json = "json"
    markdown = "markdown"
    sarif = "sarif"
    github = "github"


class FailOn(str, enum.Enum):
    """The lowest severity that makes ``toolctl lint`` exit 1."""

    error = "error"
    warning = "warning"
    info = "info"


def choices(values: type[enum.Enum]) -> str:
    """``a|b|c``: the metavar of an option that takes one of ``values``."""
    return "|".join(str(v.value) for v in values)
