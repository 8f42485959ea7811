"""What the pytest plugin hands to tests: emulator handles, tenants, the clock, webhooks."""
