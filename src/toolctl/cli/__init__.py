"""The ``toolctl`` command line: a thin layer over the Python API. The only code that prints.

The Typer application is ``toolctl.cli.app.app`` (every command registered on first access);
the console script registers only the command it runs.
"""

from __future__ import annotations

import gc

# Importing Typer and the commands creates thousands of objects that live as long as the
# process: collecting while they are built frees nothing and costs a small command ~10 %.
_collecting = gc.isenabled()
gc.disable()
try:
    from toolctl.cli.app import main
finally:
    if _collecting:
        gc.enable()

__all__ = ["main"]
