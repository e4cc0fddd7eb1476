"""Who is calling: :class:`Principal`, the identity a call carries.

A principal comes from a verified credential (an OAuth 2.1 access token over HTTP); the
local CLI and the Python API call without one (``None``), which means "the operator" and
acts on every run. The principal is recorded with each run, bounds what an MCP client may
see and act on, and keys per-caller limits. It is plain data so that later features
(per-principal secrets, quotas) can key on it without knowing where it came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Principal:
    """A verified caller: the token's issuer and subject, the client it used, its scopes."""

    issuer: str
    subject: str
    client_id: str | None = None  # ``azp`` or ``client_id`` when the token names one
    scopes: frozenset[str] = field(default_factory=frozenset)

    @property
    def key(self) -> str:
        """One string naming this caller across issuers (``iss`` and ``sub``), for rows and
        rate-limit buckets: two issuers may hand out the same ``sub``."""
        return f"{self.issuer} {self.subject}"

    def has_scopes(self, needed: frozenset[str] | set[str] | list[str] | tuple[str, ...]) -> bool:
        """Whether this principal holds every scope in ``needed``."""
        return set(needed) <= self.scopes

    def public(self) -> dict[str, object]:
        """The JSON form recorded with a run and shown by ``runs show`` (no scopes: they are
        a property of the token, not of who the caller is)."""
        data: dict[str, object] = {"iss": self.issuer, "sub": self.subject}
        if self.client_id is not None:
            data["client_id"] = self.client_id
        return data

    @classmethod
    def from_public(cls, data: object) -> Principal | None:
        """The principal a run recorded (:meth:`public`), None for none (or a damaged one):
        a continued run acts as the caller that started it. Its scopes are not recorded."""
        if not isinstance(data, dict):
            return None
        issuer, subject, client = data.get("iss"), data.get("sub"), data.get("client_id")
        if not isinstance(issuer, str) or not isinstance(subject, str):
            return None
        return cls(issuer, subject, client if isinstance(client, str) else None)
