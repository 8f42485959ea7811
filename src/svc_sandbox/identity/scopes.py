"""The scopes of spec §5 and the claims each one releases (spec §2 "Identity claims")."""

from __future__ import annotations

from dataclasses import dataclass

OPENID = "openid"
PROFILE = "profile"
EMAIL = "email"
OFFLINE_ACCESS = "offline_access"
WALLET_READ = "wallet:read"
WALLET_SEND = "wallet:send"


@dataclass(frozen=True)
class ScopeInfo:
    name: str
    meaning: str
    claims: tuple[str, ...] = ()


#: The scope table of spec §5, in the order the consent page lists them.
SCOPES: dict[str, ScopeInfo] = {
    s.name: s
    for s in (
        ScopeInfo(OPENID, "Sign you in and know your account identifier", ("sub",)),
        ScopeInfo(
            PROFILE,
            "See your name, picture and handle",
            ("name", "picture", "given_name", "family_name", "{ns}/handle"),
        ),
        ScopeInfo(EMAIL, "See your email address", ("email", "email_verified")),
        ScopeInfo(OFFLINE_ACCESS, "Stay connected when you are not using the app"),
        ScopeInfo(WALLET_READ, "Read your wallet balance"),
        ScopeInfo(WALLET_SEND, "Send money from your wallet to other users"),
    )
}

#: Scopes an app can take at registration without approval (wallet:send needs approval).
SELF_SERVE = frozenset(SCOPES) - {WALLET_SEND}


def parse_scope(value: str) -> list[str]:
    """A space-separated scope string as a list without repeats, in the given order."""
    seen: list[str] = []
    for part in value.split(" "):
        if part and part not in seen:
            seen.append(part)
    return seen


def ordered(scopes: frozenset[str] | set[str] | list[str]) -> list[str]:
    """Scopes in the order of the table (then any unknown ones, sorted)."""
    known = [s for s in SCOPES if s in scopes]
    return known + sorted(s for s in scopes if s not in SCOPES)


def scope_string(scopes: frozenset[str] | set[str] | list[str]) -> str:
    return " ".join(ordered(scopes))


def claim_names(scopes: frozenset[str], namespace: str) -> list[str]:
    names: list[str] = []
    for scope in ordered(scopes):
        info = SCOPES.get(scope)
        if info is not None:
            names += [c.replace("{ns}", namespace) for c in info.claims]
    return names
