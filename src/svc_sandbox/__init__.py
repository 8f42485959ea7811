"""svc-sandbox: a local, deterministic emulator of the payments service."""

__version__ = "0.1.0"
