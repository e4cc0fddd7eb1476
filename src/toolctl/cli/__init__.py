"""The ``toolctl`` command line: a thin layer over the Python API. The only code that prints.

The Typer application is ``toolctl.cli.app.app`` (every command registered on first access);
the console script registers only the command it runs, and runs a plain ``lint`` or ``export``
without importing Typer at all (:mod:`toolctl.cli.quick`).
"""

from __future__ import annotations


def main() -> None:
    """Console-script entry point: the quick path when it takes the command line, else Typer's
    application (:func:`toolctl.cli.app.main`)."""
    import gc
    import sys

    from toolctl.cli import quick

    code = quick.run(sys.argv[1:])
    if code is None:
        from toolctl.cli.startup import long_lived

        # Importing Typer and the commands creates thousands of objects that live as long as
        # the process.
        with long_lived():
            from toolctl.cli.app import main as typer_main
        typer_main()
    # The process ends here: the final collection would walk every object still alive (a
    # loaded registry) only for the OS to free them anyway.
    gc.freeze()
    sys.exit(code)


__all__ = ["main"]
