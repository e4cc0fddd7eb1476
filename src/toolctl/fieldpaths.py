"""Dotted field paths (``user.address.city``) of the declarative transforms, as a tree.

One reading serves both places that follow them: the runtime, which applies ``pick``/``omit``/
``redact`` to values (:mod:`toolctl.runtime.pipeline.transforms`), and the export of the schema a
view
has (:mod:`toolctl.export.viewschema`), so the two always agree on what a path names.
"""

from __future__ import annotations

import functools
from typing import Any

Tree = dict[str, Any]


@functools.lru_cache(maxsize=512)
def path_tree(paths: tuple[str, ...]) -> Tree:
    """``paths`` as a tree; an empty subtree means "this whole field". Cached and shared:
    callers read it, never change it."""
    root: Tree = {}
    for path in paths:
        node = root
        parts = path.split(".")
        for part in parts[:-1]:
            if part in node and not node[part]:
                break  # a shorter path already covers the whole field
            node = node.setdefault(part, {})
        else:
            node[parts[-1]] = {}
    return root
