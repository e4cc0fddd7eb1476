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
        # Out of the young generation unscanned (as yamlsrc._age_young_objects does): else the
        # first allocation after enabling starts a collection that walks every object the
        # imports made, to free nothing (about 3 ms of every command).
        gc.freeze()
        gc.unfreeze()
        gc.enable()

__all__ = ["main"]
