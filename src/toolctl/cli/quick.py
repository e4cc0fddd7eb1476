"""The quick path: a plain ``toolctl lint``, ``export``, ``search`` or ``validate`` run without
Typer.

Importing Typer (with the click it vendors) costs about as much as a warm ``lint``'s own work
and more than a warm ``export``'s or ``search``'s (and a tenth of a second of every
``validate``). Hooks, loops and agents run these with a
handful of options, so a command line made only of the options below, each with a value its
command takes as it is, is parsed here and handed to the command's work
(:func:`toolctl.cli.linting.run`, :func:`toolctl.cli.exporting.run`,
:func:`toolctl.cli.searching.run`, :func:`toolctl.cli.validating.run`) behind the CLI's one error
boundary. Anything else (help, completion, an option not listed, ``--opt=value``, a value Typer
would refuse or convert, a repeated single-valued option, one positional too many) returns None
and Typer parses the command line as always, so its rules and messages stay the only ones.
``tests/cli/test_quick.py`` checks the tables against the Typer declarations and the output of
both paths against each other.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolctl.cli.choices import SEARCH_K_MAX
from toolctl.cli.startup import long_lived

FLAG, OFF, VALUE, MANY = "flag", "off", "value", "many"  # how an option takes its value
Convert = Callable[[str], Any]
# flag -> (parameter, kind, convert) for VALUE and MANY; convert raises ValueError to refuse
Options = dict[str, tuple[str, str, Convert | None]]
_DIGITS = re.compile(r"[0-9]+\Z")


def _path(text: str) -> Path:
    # Only text a Path keeps as written (Typer's message would quote it otherwise); "-" is
    # stdin/stdout for some options: Typer's.
    if text == "-" or str(Path(text)) != text:
        raise ValueError(text)
    return Path(text)


def _count(text: str) -> int:
    if not _DIGITS.match(text):  # Typer's messages for "-1", "two", "+3"
        raise ValueError(text)
    return int(text)


def _between(low: int, high: int) -> Convert:
    def convert(text: str) -> int:
        number = _count(text)
        if not low <= number <= high:  # Typer's range message
            raise ValueError(text)
        return number

    return convert


def _one_of(*values: str) -> Convert:
    def convert(text: str) -> str:
        if text not in values:  # Typer's message (and its case rules) for the others
            raise ValueError(text)
        return text

    return convert


def _common(tools: bool = True, **extra: tuple[str, str, Convert | None]) -> Options:
    options: Options = {
        "--registry": ("registry", VALUE, _path),
        "--packs": ("packs", FLAG, None),
        "--no-packs": ("packs", OFF, None),
        "--verbose": ("verbose", FLAG, None),
        "--quiet": ("quiet", FLAG, None),
    }
    if tools:  # a command that acts on tools takes --tool/-t
        options["--tool"] = options["-t"] = ("tool", MANY, str)
    # keyword names stand for the long flags: __fail_on is --fail-on
    options.update({flag.replace("_", "-"): spec for flag, spec in extra.items()})
    for short, long in (("-r", "--registry"), ("-v", "--verbose"), ("-q", "--quiet")):
        options[short] = options[long]
    return options


# ``-f markdown`` (only with --list-rules) and the listing options stay with Typer.
LINT = _common(
    __format=("fmt", VALUE, _one_of("text", "json", "sarif", "github")),
    __fail_on=("fail_on", VALUE, _one_of("error", "warning", "info")),
    __provider=("provider", VALUE, str),
    __select=("select", VALUE, str),
    __ignore=("ignore", VALUE, str),
    __resolve=("resolve", FLAG, None),
)
LINT["-f"] = LINT["--format"]
EXPORT = _common(
    __provider=("provider", VALUE, str),
    __format=("fmt", VALUE, str),
    __tag=("tag", MANY, str),
    __output=("output", VALUE, _path),
    __indent=("indent", VALUE, _count),
    __check=("check", FLAG, None),
    __examples_in_description=("examples_in_description", FLAG, None),
)
EXPORT["-f"] = EXPORT["--format"]
EXPORT["-o"] = EXPORT["--output"]
SEARCH = _common(
    tools=False,
    __format=("fmt", VALUE, _one_of("text", "json")),
    __queries=("queries", VALUE, _path),
)
SEARCH["-f"] = SEARCH["--format"]
SEARCH["-k"] = ("k", VALUE, _between(1, SEARCH_K_MAX))
VALIDATE = _common(tools=False, __format=("fmt", VALUE, _one_of("text", "json")))
VALIDATE["-f"] = VALIDATE["--format"]
COMMANDS = {"lint": LINT, "export": EXPORT, "search": SEARCH, "validate": VALIDATE}
# each command's positional arguments: (parameter, how many at most; None: any number)
POSITIONAL: dict[str, tuple[str, int | None]] = {
    "lint": ("targets", None),
    "export": ("targets", None),
    "search": ("query", 1),
    "validate": ("paths", None),
}


def parse(argv: list[str]) -> tuple[str, bool, dict[str, Any]] | None:
    """``(command, no_cache, parameters)`` for a command line the quick path takes, else None.

    ``parameters`` holds only what the command line gives (the command's defaults stand for
    the rest), positionals as :data:`POSITIONAL` names them (a list, or the one value).
    """
    no_cache = False
    rest = list(argv)
    while rest and rest[0] == "--no-cache":
        no_cache = True
        rest.pop(0)
    if not rest or rest[0] not in COMMANDS or os.environ.get("_TOOLCTL_COMPLETE"):
        return None
    options = COMMANDS[rest[0]]
    positional, most = POSITIONAL[rest[0]]
    params: dict[str, Any] = {}
    args = iter(rest[1:])
    for arg in args:
        if not arg.startswith("-"):
            given = params.setdefault(positional, [])
            if most is not None and len(given) >= most:
                return None  # Typer's message: an extra argument
            given.append(arg)
            continue
        spec = options.get(arg)
        if spec is None:  # help, "--", "--opt=value", "-vq", an option not listed: Typer's
            return None
        name, kind, convert = spec
        if kind in (FLAG, OFF):
            params[name] = kind == FLAG
            continue
        value = next(args, None)
        if value is None or value.startswith("-") or (kind == VALUE and name in params):
            return None
        assert convert is not None
        try:
            converted = convert(value)
        except ValueError:
            return None
        if kind == MANY:
            params.setdefault(name, []).append(converted)
        else:
            params[name] = converted
    if params.get("verbose") and params.get("quiet"):
        return None  # Typer's message: not both
    if most == 1 and positional in params:
        params[positional] = params[positional][0]
    return rest[0], no_cache, params


def run(argv: list[str]) -> int | None:
    """Run ``argv`` on the quick path and return its exit code; None when Typer must parse it.

    Process-wide settings are left as :func:`toolctl.cli.boundary.apply_root` made them (the
    in-process caller restores them)."""
    parsed = parse(argv)
    if parsed is None:
        return None
    command, no_cache, params = parsed
    with long_lived():  # the command's modules live until the process ends
        from toolctl.cli import verbosity
        from toolctl.cli.boundary import apply_root, guarded

        work = _work(command, params)
    apply_root(no_cache)
    loud = bool(params.get("verbose")) if command == "export" else params.pop("verbose", False)
    hushed = params.pop("quiet", False)
    return guarded(lambda: verbosity.at_level(loud, hushed, work, **params))


def _work(command: str, params: dict[str, Any]) -> Callable[..., int]:
    """The work of ``command``, its choice values in ``params`` made the enums Typer gives."""
    if command == "lint":
        from toolctl.cli import linting
        from toolctl.cli.choices import FailOn, ReportFormat

        if "fmt" in params:
            params["fmt"] = ReportFormat(params["fmt"])
        if "fail_on" in params:
            params["fail_on"] = FailOn(params["fail_on"])
        return linting.run
    if command == "search":
        from toolctl.cli import searching
        from toolctl.cli.choices import OutputFormat

        if "fmt" in params:
            params["fmt"] = OutputFormat(params["fmt"])
        return searching.run
    if command == "validate":
        from toolctl.cli import validating
        from toolctl.cli.choices import OutputFormat

        if "fmt" in params:
            params["fmt"] = OutputFormat(params["fmt"])
        if "paths" in params:
            params["paths"] = [Path(p) for p in params["paths"]]
        return validating.run
    from toolctl.cli import exporting

    return exporting.run
