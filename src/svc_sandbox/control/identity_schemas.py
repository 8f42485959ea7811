"""Bodies of the identity control-plane routes (users, OAuth apps, sign-in, consent, keys)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictStr

from svc_sandbox.commerce.schemas import NoNulls, refusing
from svc_sandbox.core.validation import unreadable_url_problem

Short = Annotated[StrictStr, Field(min_length=1, max_length=200)]
Url = Annotated[StrictStr, Field(min_length=1, max_length=2000)]
Kyc = Literal["not_started", "pending", "approved", "rejected"]


class UserCreateBody(NoNulls):
    handle: Short | None = None
    name: Short | None = None
    givenName: Short | None = None
    familyName: Short | None = None
    email: Short | None = None
    emailVerified: StrictBool = True
    picture: Url | None = None
    kyc: Kyc = "approved"
    password: Annotated[StrictStr, Field(min_length=1, max_length=200)] | None = None


class UserUpdateBody(NoNulls):
    handle: Short | None = None
    name: Short | None = None
    givenName: Short | None = None
    familyName: Short | None = None
    email: Short | None = None
    emailVerified: StrictBool | None = None
    picture: Url | None = None
    kyc: Kyc | None = None
    password: Annotated[StrictStr, Field(min_length=1, max_length=200)] | None = None


class AppCreateBody(NoNulls):
    #: The owner organization; default the seeded sandbox organization.
    organizationId: StrictStr | None = None
    name: Annotated[StrictStr, Field(min_length=1, max_length=120)]
    redirectUris: Annotated[list[Url], Field(min_length=1, max_length=20)]
    scopes: Annotated[list[StrictStr], Field(min_length=1, max_length=20)] = ["openid"]
    clientType: Literal["confidential", "public"] = "confidential"
    website: Url | None = None
    logoUrl: Url | None = None


class AppUpdateBody(NoNulls):
    name: Annotated[StrictStr, Field(min_length=1, max_length=120)] | None = None
    redirectUris: Annotated[list[Url], Field(min_length=1, max_length=20)] | None = None
    scopes: Annotated[list[StrictStr], Field(min_length=1, max_length=20)] | None = None
    website: Annotated[StrictStr, Field(max_length=2000)] | None = None
    logoUrl: Annotated[StrictStr, Field(max_length=2000)] | None = None


class ApproveBody(NoNulls):
    approved: StrictBool = True


class ConsentBody(NoNulls):
    scopes: Annotated[list[StrictStr], Field(max_length=20)] = ["openid"]


class AuthorizeAsBody(NoNulls):
    userId: StrictStr
    #: The authorize request's query parameters (values as strings).
    params: dict[StrictStr, StrictStr] | None = None
    #: Or the whole authorize URL (its query is used).
    url: Annotated[StrictStr, Field(max_length=8000), refusing(unreadable_url_problem)] | None = (
        None
    )
    decision: Literal["approve", "deny"] = "approve"
    #: The scopes the user grants (default all requested; openid is always granted).
    scopes: Annotated[list[StrictStr], Field(max_length=20)] | None = None
