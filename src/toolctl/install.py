"""How to install toolctl or one of its extras: the one wording every install hint uses.

The distribution ``toolctl-registry`` is not yet published on PyPI, so a hint that names only the
index would send people to a name that does not resolve (or, for ``toolctl``, to an unrelated
project). Every hint names the install from a checkout first, then the index name it will have.
"""

from __future__ import annotations

from toolctl import DISTRIBUTION


def install_hint(extra: str | None = None) -> str:
    """The pip commands that install toolctl with ``extra`` (``mcp``, ``postgres`` ...).

    ``install_hint("mcp")`` is ``from a checkout: pip install '.[mcp]'; from PyPI, once
    toolctl-registry is published there: pip install 'toolctl-registry[mcp]'``.
    """
    spec = f"[{extra}]" if extra else ""
    return (
        f"from a checkout: pip install '.{spec}'; "
        f"from PyPI, once {DISTRIBUTION} is published there: pip install '{DISTRIBUTION}{spec}'"
    )
