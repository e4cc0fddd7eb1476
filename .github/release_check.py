"""Before a release is built: the tag, the version and CHANGELOG.md agree.

    python .github/release_check.py v0.2.0

Exit 0 when ``v0.2.0`` is ``v`` + ``toolctl.__version__`` (the one place the version is written),
CHANGELOG.md has a ``## 0.2.0`` heading with entries under it, and its ``## Unreleased`` section
is empty (entries left there would be published without being listed). Otherwise exit 1 and say
what to fix. Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

VERSION = re.compile(r'^__version__ = "([^"]+)"$', re.M)
HEADING = re.compile(r"^## (.+?)\s*$", re.M)


def version(root: Path) -> str:
    """``__version__`` as written in src/toolctl/__init__.py (read, not imported)."""
    found = VERSION.search((root / "src" / "toolctl" / "__init__.py").read_text("utf-8"))
    if found is None:
        raise SystemExit('src/toolctl/__init__.py: no __version__ = "X.Y.Z" line')
    return found.group(1)


def sections(changelog: str) -> dict[str, str]:
    """CHANGELOG.md's ``## `` sections: the heading's first word (``0.2.0``, ``Unreleased``)
    mapped to the text under it."""
    heads = list(HEADING.finditer(changelog))
    ends = [h.start() for h in heads[1:]] + [len(changelog)]
    pairs = zip(heads, ends, strict=True)
    return {head.group(1).split()[0]: changelog[head.end() : end] for head, end in pairs}


def problems(tag: str, root: Path) -> list[str]:
    """What stops ``tag`` from being released from ``root``; empty when nothing does."""
    found: list[str] = []
    current = version(root)
    if tag != f"v{current}":
        found.append(
            f"tag {tag} does not match __version__ {current!r} in src/toolctl/__init__.py: "
            f"tag v{current}, or set __version__ to the tag's version and commit"
        )
    notes = sections((root / "CHANGELOG.md").read_text("utf-8"))
    if not re.search(r"^- ", notes.get(current, ""), re.M):
        found.append(
            f"CHANGELOG.md has no '## {current}' section with entries: rename '## Unreleased' "
            f"to '## {current}' (and add an empty '## Unreleased' above it)"
        )
    if re.search(r"^- ", notes.get("Unreleased", ""), re.M):
        found.append(
            "CHANGELOG.md still has entries under '## Unreleased': move them under "
            f"'## {current}' so the release lists them"
        )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tag", help="the tag being released, e.g. v0.2.0")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    found = problems(args.tag, args.root)
    for problem in found:
        print(f"release_check: {problem}", file=sys.stderr)
    if not found:
        print(f"release_check: {args.tag} is ready: version, tag and CHANGELOG agree")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
