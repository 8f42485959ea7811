"""Hosted pages: payment link, simulator, product page (server-rendered, no JavaScript)."""
