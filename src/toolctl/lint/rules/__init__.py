"""The built-in rule families; each module's ``RULES`` is a ``toolctl.lint_rules`` entry point."""

BUILTIN = (
    "toolctl.lint.rules.descriptions",
    "toolctl.lint.rules.schemas",
    "toolctl.lint.rules.patterns",
    "toolctl.lint.rules.providers",
    "toolctl.lint.rules.annotations",
    "toolctl.lint.rules.examples",
    "toolctl.lint.rules.security",
    "toolctl.lint.rules.size",
    "toolctl.lint.rules.resolve",
    "toolctl.lint.rules.engine",
)
