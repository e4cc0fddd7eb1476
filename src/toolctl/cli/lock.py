"""``toolctl lock``: write ``toolctl.lock``, or check that the registry still matches it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolctl.cli import exitcodes
from toolctl.cli.options import PacksOpt, RegistryOpt, VerifyKeyOpt


def lock(
    registry: RegistryOpt = None,
    packs: PacksOpt = True,
    check: Annotated[
        bool,
        typer.Option("--check", help="Exit 1 when the registry no longer matches the lock file."),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Write even when a version bump is missing.")
    ] = False,
    sign: Annotated[
        Path | None,
        typer.Option(
            "--sign",
            metavar="KEY.pem",
            help="Sign the lock with this Ed25519 private key (PKCS8 PEM): writes "
            "toolctl.lock.sig, a DSSE envelope of an in-toto statement.",
        ),
    ] = None,
    verify_key: VerifyKeyOpt = None,
) -> None:
    """Record each enabled tool's contract, version, handler and digests in toolctl.lock.

    The lock file sits at the project root; commit it. `--check` (for CI) lists every change
    since it was written and fails on any, and on a breaking or compatible change whose tool
    version was not bumped. `toolctl serve --locked` and `toolctl export --locked` refuse a
    registry that differs from it.
    """
    from toolctl.cli.registries import load
    from toolctl.cli.render import print_diagnostics
    from toolctl.contract import diff, lock_path, read, registry_side, write
    from toolctl.contract.changes import Kind
    from toolctl.contract.report import render_text
    from toolctl.contract.sides import Side
    from toolctl.loader import display_path

    loaded = load(registry, packs=packs)
    project = loaded.project
    assert project is not None  # load() always names the project
    head = registry_side(loaded, "working tree")  # a registry with errors: listed, exit 1
    print_diagnostics(d for d in loaded.diagnostics if d.severity.value != "info")
    path = lock_path(project)
    shown = display_path(path)
    if verify_key is not None and not check:
        raise typer.BadParameter("--verify-key checks a lock: give --check with it")
    if check:
        if verify_key is not None:
            from toolctl.contract.signing import verify

            verify(path, verify_key)  # a LockError exits 1
        result = diff(Side(shown, read(path)), head)
        if result.changes:
            typer.echo(render_text(result), nl=False)
            typer.echo(
                f"{shown} does not match the registry: run `toolctl lock`, review and commit it",
                err=True,
            )
            raise typer.Exit(exitcodes.FINDINGS)
        signed = " (signature verified)" if verify_key is not None else ""
        typer.echo(f"ok: {shown} matches {len(head.entries)} tool(s){signed}", err=True)
        return
    if path.is_file() and not force:
        semver = [c for c in diff(Side(shown, read(path)), head).changes if c.kind is Kind.SEMVER]
        if semver:
            for c in semver:
                typer.echo(f"{c.tool}: {c.code} {c.message}", err=True)
            typer.echo(f"{shown} not written: bump the versions (or pass --force)", err=True)
            raise typer.Exit(exitcodes.FINDINGS)
    changed = write(path, head.entries)
    state = "wrote" if changed else "up to date:"
    typer.echo(f"{state} {shown} ({len(head.entries)} tool(s))", err=True)
    if sign is not None:
        from toolctl.contract.signing import sign as sign_lock

        written = sign_lock(path, sign)
        typer.echo(f"signed: {display_path(written)}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``toolctl lock`` to ``app``."""
    app.command("lock")(lock)
