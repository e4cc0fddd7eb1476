"""The ``toolctl`` command line: a thin layer over the Python API. The only code that prints.

The Typer application is ``toolctl.cli.app.app`` (every command registered on first access);
the console script registers only the command it runs.
"""

from __future__ import annotations

from toolctl.cli.startup import long_lived

# Importing Typer and the commands creates thousands of objects that live as long as the process.
with long_lived():
    from toolctl.cli.app import main

__all__ = ["main"]
