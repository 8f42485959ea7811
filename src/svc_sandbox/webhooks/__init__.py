"""Events and their delivery as signed webhooks."""
