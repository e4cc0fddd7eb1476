"""``-v/--verbose`` and ``-q/--quiet`` on every command, declared once.

Each command's callback is wrapped as it is registered (:func:`with_verbosity`): the wrapper's
signature gains the two options (a command that declares ``verbose`` itself keeps its own
help), and while the command runs :func:`level` says which was given. The CLI's output
helpers read it: ``-q`` leaves only errors and the command's result, ``-v`` adds info notes.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

if TYPE_CHECKING:
    import inspect

    import typer

T = TypeVar("T")


QUIET, NORMAL, VERBOSE = -1, 0, 1
# The level of the command running in this context (a ContextVar: in-process callers such as
# tests run commands one after another, each with its own level).
_LEVEL: ContextVar[int] = ContextVar("toolctl_verbosity", default=NORMAL)
_WRAPPED = "__toolctl_verbosity__"


def _options() -> dict[str, Any]:
    import typer  # only where Typer builds a command: the quick path never asks

    verbose = typer.Option(
        "--verbose", "-v", help="Report everything, not only problems: info notes, every case."
    )
    quiet = typer.Option("--quiet", "-q", help="Say less: only errors and the command's result.")
    return {"VerboseOpt": Annotated[bool, verbose], "QuietOpt": Annotated[bool, quiet]}


def __getattr__(name: str) -> Any:
    # ``VerboseOpt``/``QuietOpt`` (the ``Annotated`` declarations) are built on first use: the
    # output helpers read :func:`quiet` from this module without importing Typer.
    if name in ("VerboseOpt", "QuietOpt"):
        globals().update(_options())
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def level() -> int:
    """The running command's level: :data:`QUIET`, :data:`NORMAL` or :data:`VERBOSE`."""
    return _LEVEL.get()


def quiet() -> bool:
    """``-q`` was given."""
    return _LEVEL.get() <= QUIET


def verbose() -> bool:
    """``-v`` was given."""
    return _LEVEL.get() >= VERBOSE


def at_level(loud: bool, hushed: bool, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``call(*args, **kwargs)`` with :func:`level` set from ``-v`` (loud) / ``-q`` (hushed)."""
    token = _LEVEL.set(VERBOSE if loud else QUIET if hushed else NORMAL)
    try:
        return call(*args, **kwargs)
    finally:
        _LEVEL.reset(token)


def _parameter(name: str, annotation: Any) -> inspect.Parameter:
    import inspect  # (with Typer, which imports it anyway; not on the quick path)

    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=False, annotation=annotation
    )


def with_verbosity(callback: Callable[..., Any]) -> Callable[..., Any]:
    """``callback`` taking ``-v``/``-q`` too, with :func:`level` set while it runs."""
    if getattr(callback, _WRAPPED, False):
        return callback
    import inspect

    signature = inspect.signature(callback)
    hints = typing.get_type_hints(callback, include_extras=True)
    params = [
        p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()
    ]
    own = {p.name for p in params}
    if "verbose" not in own:
        params.append(_parameter("verbose", __getattr__("VerboseOpt")))
    if "quiet" not in own:
        params.append(_parameter("quiet", __getattr__("QuietOpt")))
    # keyword-only parameters must follow the others; Typer reads them all the same
    params.sort(key=lambda p: p.kind == inspect.Parameter.KEYWORD_ONLY)

    @functools.wraps(callback)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        loud = kwargs["verbose"] if "verbose" in own else kwargs.pop("verbose", False)
        hushed = kwargs["quiet"] if "quiet" in own else kwargs.pop("quiet", False)
        if loud and hushed:
            import typer

            raise typer.BadParameter("give -v/--verbose or -q/--quiet, not both")
        return at_level(loud, hushed, callback, *args, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    if "return" in hints:
        wrapper.__annotations__["return"] = hints["return"]
    setattr(wrapper, _WRAPPED, True)
    return wrapper


def wrap_commands(app: typer.Typer) -> None:
    """Give every command of ``app`` (and of its groups) ``-v``/``-q``."""
    for command in app.registered_commands:
        if command.callback is not None:
            command.callback = with_verbosity(command.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            wrap_commands(group.typer_instance)
