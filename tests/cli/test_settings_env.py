"""Every setting as an ``SVC_SANDBOX_<NAME>`` environment variable: values arrive as text."""

from __future__ import annotations

import typing

import pytest

from svc_sandbox.settings import ENV_PREFIX, Settings

#: Settings whose default (None) is no value to write: an example the docs give instead.
EXAMPLES: dict[str, str] = {
    "public_url": "http://127.0.0.1:8700",
    "base_url": "http://127.0.0.1:8700/api",
    "auth_url": "http://127.0.0.1:8700/auth",
    "wallet_base_url": "http://127.0.0.1:8700/wallet",
    "resource_url": "http://127.0.0.1:8700/wallet",
    "pay_url": "http://127.0.0.1:8700/pay",
    "simulate_url": "http://127.0.0.1:8700/simulate",
    "product_page_url": "http://127.0.0.1:8700/p",
    "provider_url": "http://127.0.0.1:8700/provider",
    "webhook_url": "http://127.0.0.1:9000/hooks",
    "webhook_secret": "whsec_example",
    "claims_namespace": "http://127.0.0.1:8700/auth/claims",
    "triggers_file": "triggers.yaml",
    "state_file": "state.json",
    "export_on_exit": "state.json",
}


def env_texts(name: str) -> list[str]:
    """Each value of a Literal setting, else its default (or example), as the env writes it."""
    field = Settings.model_fields[name]
    if typing.get_origin(field.annotation) is typing.Literal:
        return [str(choice) for choice in typing.get_args(field.annotation)]
    if field.default is None:
        return [EXAMPLES[name]]
    default = Settings().model_dump(mode="json")[name]
    return [str(default).lower() if isinstance(default, bool) else str(default)]


@pytest.mark.parametrize(
    ("name", "text"), [(name, text) for name in Settings.model_fields for text in env_texts(name)]
)
def test_every_setting_loads_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, name: str, text: str
) -> None:
    monkeypatch.setenv(ENV_PREFIX + name.upper(), text)
    loaded = Settings.load().model_dump(mode="json")[name]
    assert str(loaded).lower() == text.lower()


def test_no_credentials_status_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_SANDBOX_NO_CREDENTIALS_STATUS", "401")
    assert Settings.load().no_credentials_status == 401
    monkeypatch.setenv("SVC_SANDBOX_NO_CREDENTIALS_STATUS", "402")
    with pytest.raises(ValueError, match="401 or 403"):
        Settings.load()


def test_an_unknown_variable_is_named_with_the_closest_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SVC_SANDBOX_CLOCK", "frozen")
    monkeypatch.setenv("SVC_SANDBOX_PRODUCTION_PUSH_DELAY", "3")
    monkeypatch.setenv("SVC_SANDBOX_URL", "http://127.0.0.1:1")  # exec's own: no warning
    assert Settings.unknown_env_names() == [
        "svc-sandbox: warning: SVC_SANDBOX_CLOCK is no setting and is ignored "
        "(did you mean SVC_SANDBOX_CLOCK_MODE?)",
        "svc-sandbox: warning: SVC_SANDBOX_PRODUCTION_PUSH_DELAY is no setting and is ignored "
        "(did you mean SVC_SANDBOX_PRODUCTION_PUSH_DELAY_SECONDS?)",
    ]
