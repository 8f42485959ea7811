"""The ``SVC_SANDBOX_*`` variables as the pytest plugin reads them, checked once when pytest
starts: a bad value is one usage error naming the variable (not a traceback per test), an
unknown name draws the CLI's warning, and a root's origin is replaced by the plugin's server.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from svc_sandbox.settings import Settings

#: What the plugin's Sandbox always sets over the environment (``Runtime.new_sandbox``).
PLUGIN_OVERRIDES: dict[str, Any] = {"clock_mode": "frozen", "strict": True, "host": "127.0.0.1"}
#: Settings whose value is where the emulator is reached: under the plugin that is always its
#: own server thread on 127.0.0.1, so only a root's path is kept.
PLACED_ELSEWHERE = ("public_url",)


def any_set() -> bool:
    """Whether any ``SVC_SANDBOX_*`` variable is set (else nothing is imported or checked)."""
    from svc_sandbox.settings import ENV_PREFIX

    return any(name.startswith(ENV_PREFIX) for name in os.environ)


def check(seed: int) -> list[str]:
    """The warnings to show (unknown names, ignored origins); raises ``ValueError`` naming the
    first variable whose value the plugin's Sandbox would refuse."""
    from pydantic import ValidationError

    from svc_sandbox.core.errors import SandboxError
    from svc_sandbox.settings import ENV_PREFIX, ROOT_DEFAULTS, Settings, refusal

    warnings = Settings.unknown_env_names()
    try:
        settings = Settings.load({**PLUGIN_OVERRIDES, "seed": seed})
    except ValidationError as exc:
        raise ValueError(refusal(exc)) from None
    if settings.triggers_file:
        from svc_sandbox.commerce.triggers import read_trigger_file

        try:
            read_trigger_file(settings.triggers_file)
        except SandboxError as exc:
            raise ValueError(f"{ENV_PREFIX}TRIGGERS_FILE: {exc.message}") from None
    for name in (*PLACED_ELSEWHERE, *ROOT_DEFAULTS):
        value = getattr(settings, name)
        if value is not None and urlsplit(value).netloc:
            kept = "it is ignored" if name in PLACED_ELSEWHERE else "only its path is kept"
            warnings.append(
                f"svc-sandbox: warning: {ENV_PREFIX}{name.upper()}={value}: the pytest plugin "
                f"serves on its own 127.0.0.1 port, so {kept}"
            )
    return warnings


def localize(settings: Settings) -> None:
    """Points ``public_url`` and every root set from the environment at the plugin's own
    server (``settings.origin``, 127.0.0.1 and its port), keeping each root's path."""
    from svc_sandbox.settings import ROOT_DEFAULTS

    for name in PLACED_ELSEWHERE:
        if getattr(settings, name) is not None:
            setattr(settings, name, None)
    for name in ROOT_DEFAULTS:
        value = getattr(settings, name)
        if value is not None:
            setattr(settings, name, settings.origin + urlsplit(value).path)
