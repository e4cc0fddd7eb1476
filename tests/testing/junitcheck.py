"""Checking JUnit XML against the Jenkins ``junit-10.xsd`` (the schema CI servers read)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

XSD = Path(__file__).parent / "fixtures" / "junit-10.xsd"


@functools.cache
def _schema() -> Any:
    import xmlschema

    return xmlschema.XMLSchema(str(XSD))


def junit_problems(source: str | Path) -> list[str]:
    """Every way ``source`` (a path or the XML text) breaks junit-10.xsd; empty when valid."""
    text = source.read_text("utf-8") if isinstance(source, Path) else source
    return [f"{e.path}: {e.reason}" for e in _schema().iter_errors(text)]
