"""Docstrings as descriptions: the summary, and per-parameter, per-attribute and return text.

Google, NumPy and reStructuredText (Sphinx ``:param x:``) styles are told apart by
``docstring_parser`` (imported here only, so loading toolctl never pays for it).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field


@dataclass
class DocText:
    """What a docstring says: ``description`` (summary and body), ``params`` (name → text,
    attributes included), ``returns``."""

    description: str = ""
    params: dict[str, str] = field(default_factory=dict)
    returns: str | None = None


_ROLE = re.compile(r":(?:py:)?[a-z]+:`~?([^`]+)`")  # :class:`Foo`, :py:func:`~pkg.bar`


def _one_line(text: str | None) -> str:
    """Hard-wrapped docstring text joined into paragraphs (single newlines become spaces), with
    reStructuredText markup as the Markdown a model reads (``x`` and :class:`x` become `x`)."""
    if not text:
        return ""
    text = _ROLE.sub(lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", text).replace("``", "`")
    paragraphs = [" ".join(p.split()) for p in inspect.cleandoc(text).split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)


def parse_docstring(doc: str | None) -> DocText:
    """Parse ``doc`` in whichever of the three styles it is written."""
    if not doc or not doc.strip():
        return DocText()
    import docstring_parser

    parsed = docstring_parser.parse(inspect.cleandoc(doc))
    parts = [_one_line(parsed.short_description), _one_line(parsed.long_description)]
    params = {
        p.arg_name.lstrip("*"): _one_line(p.description)
        for p in parsed.params
        if p.description and p.description.strip()
    }
    returns = _one_line(parsed.returns.description) if parsed.returns else None
    return DocText("\n\n".join(p for p in parts if p), params, returns or None)


def field_docs(cls: type) -> dict[str, str]:
    """Field descriptions from a class docstring's ``Attributes``/``Args`` section."""
    return parse_docstring(cls.__dict__.get("__doc__")).params
