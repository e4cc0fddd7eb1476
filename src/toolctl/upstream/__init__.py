"""Upstream MCP servers: a bounded client (:mod:`.connection`, :mod:`.session`), the built-in
handler of ``upstream:`` tools (:mod:`.handler`) and the drift check against the lock
(:mod:`.drift`). Core code: no ``mcp`` SDK, no printing."""
