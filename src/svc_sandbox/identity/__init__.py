"""The identity provider of spec §5: OAuth 2.1 / OpenID Connect, on the sandbox clock.

Rules live in plain modules (users, apps, keys, tokens, grants, sessions, discovery, limits);
only api.py speaks HTTP.
"""
