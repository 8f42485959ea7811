"""Organizations and their API tokens: the tenants of the commerce and wallet APIs."""
