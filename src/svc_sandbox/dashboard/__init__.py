"""The sandbox dashboard at {origin}/_sandbox/ui: what the sandbox holds, and buttons that call
the control plane (api.py serves the pages; views.py builds what they show, without Flask)."""
