"""The OpenAPI contract: loading, request/response validation, conformance reports."""
