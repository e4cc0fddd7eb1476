"""The exit codes of every ``toolctl`` command, defined once."""

from __future__ import annotations

OK = 0
FINDINGS = 1
"""Findings (validate, lint, test), a refused export, or a tool run that failed."""
USAGE = 2
"""A usage error: bad options, an unknown tool, an unreadable input or unwritable output file."""
INTERNAL = 3
"""A bug in toolctl (rerun with TOOLCTL_TRACEBACK=1 to see the traceback)."""
PENDING = 4
"""A run waits: awaiting approval or suspended (its run id is printed)."""
INTERRUPTED = 130
"""Interrupted with Ctrl-C."""
