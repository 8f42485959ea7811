"""Webhook signatures as the emulator uses them.

The one implementation is ``svc_sandbox.client.signing`` (pure, standard library only), shared
with the Python client's ``verify_webhook`` and ``build_test_webhook``; the emulator's modules
import it through here.
"""

from __future__ import annotations

from svc_sandbox.client.signing import (
    DEFAULT_TOLERANCE,
    SCHEME,
    SIGNATURE_HEADER,
    SignatureError,
    TestPayload,
    Verification,
    build_test_payload,
    compute_signature,
    parse_header,
    sign,
    verify,
)

__all__ = [
    "DEFAULT_TOLERANCE",
    "SCHEME",
    "SIGNATURE_HEADER",
    "SignatureError",
    "TestPayload",
    "Verification",
    "build_test_payload",
    "compute_signature",
    "parse_header",
    "sign",
    "verify",
]
