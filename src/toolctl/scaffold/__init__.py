"""Starting points: a new project (``toolctl init``) and declarations drafted from existing
Python functions (``toolctl new --from``). No printing, no exiting; the CLI does that."""

from __future__ import annotations

from toolctl.scaffold.introspect import ToolDraft, describe_function
from toolctl.scaffold.types import Gap

__all__ = ["Gap", "ToolDraft", "describe_function"]
