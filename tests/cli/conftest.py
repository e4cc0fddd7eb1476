"""CLI tests reuse the runtime fixtures (a project with the fixture tools)."""

from tests.runtime.conftest import events, make_registry, project, reg  # noqa: F401
