"""The commerce API: products, checkout sessions, payments, orders, balance and withdrawals."""
