"""The ``toolctl`` command line: a thin layer over the Python API. The only code that prints."""

from __future__ import annotations

from toolctl.cli.app import app, main

__all__ = ["app", "main"]
