"""YAML scenarios: readable flows replayed against the in-process emulator, a running emulator or
another server that speaks the contract (docs/scenarios.md). Plain Python, no Flask."""
