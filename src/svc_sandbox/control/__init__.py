"""The /_sandbox control plane: thin HTTP fronts over Sandbox methods."""
