"""The wallet API (spec §4 "Wallet API"): users' wallets, their ledger, transfers between them."""
