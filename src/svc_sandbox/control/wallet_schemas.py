"""Bodies of the wallet control-plane routes (control/wallet_api.py)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictInt, StrictStr

from svc_sandbox.commerce.schemas import NoNulls
from svc_sandbox.wallet.ledger import MAX_CONTROL_AMOUNT

Note = Annotated[StrictStr, Field(min_length=1, max_length=500)]


class FundBody(NoNulls):
    amountMinor: Annotated[StrictInt, Field(ge=1, le=MAX_CONTROL_AMOUNT)]
    note: Note | None = None


class SetBalanceBody(NoNulls):
    availableMinor: Annotated[StrictInt, Field(ge=0, le=MAX_CONTROL_AMOUNT)]
    note: Note | None = None
