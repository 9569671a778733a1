"""Errors raised by the vendor layer.

The hierarchy::

    OrizuruError
    ├── UnsupportedContentError         content the target vendor cannot represent
    ├── StreamFormatError               a body that is not what the vendor's format promises
    └── APIError                        anything that went wrong talking to a vendor
        ├── APIConnectionError          network failure, DNS, refused, dropped
        │   └── APITimeoutError
        └── APIStatusError              the vendor answered with an error (status, type, message)
            ├── BadRequestError             400
            ├── AuthenticationError         401
            ├── PermissionDeniedError       403
            ├── NotFoundError               404
            ├── ConflictError               409
            ├── RequestTooLargeError        413
            ├── UnprocessableEntityError    422
            ├── RateLimitError              429
            ├── OverloadedError             529 (Anthropic), or an ``overloaded_error`` sent mid-stream
            ├── InternalServerError         >= 500
            └── StreamedError               an error sent inside a 200 stream (any other type)

Every class has an ``error_code``: the stable code the page branches on (:mod:`pycore.contract`).

Every :class:`APIStatusError` names the vendor, the HTTP status, the vendor's error type and the
vendor's own message, and keeps the response headers lower-cased. Messages are passed through
:func:`redact` so an API key never appears in one, even when the vendor echoes it back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

# Shapes of vendor keys, masked even when we were not told the key (a proxy may echo another one).
_KEY_SHAPES = re.compile(r"(sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{12,}|AIza[0-9A-Za-z_\-]{20,})")


# Keys under which a value is a credential, in params, headers and messages alike (compared lower-cased).
_SECRET_KEYS = frozenset({"api_key", "authorization", "x-api-key", "api-key", "x-goog-api-key", "proxy-authorization",
                          "cookie", "access_token", "refresh_token", "client_secret"})


def secrets_in(value: Any, key: str = "") -> list[str]:
    """Every string under a key that names a credential (at any depth); for ``Bearer X``, also ``X``."""
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in secrets_in(v, str(k).lower())]
    if isinstance(value, list):
        return [s for item in value for s in secrets_in(item, key)]
    if isinstance(value, str) and key in _SECRET_KEYS and len(value) >= 4:
        found = [value]
        scheme, _, token = value.partition(" ")
        if token and scheme.lower() in ("bearer", "basic", "token") and len(token) >= 4:
            found.append(token)
        return found
    return []


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return _KEY_SHAPES.sub("[redacted]", text)


class OrizuruError(Exception):
    """Base of every error the core raises on purpose."""
    error_code: ClassVar[str] = "internal"


class UnsupportedContentError(OrizuruError):
    """The conversation holds content the target vendor cannot represent."""
    error_code: ClassVar[str] = "unsupported_content"


class StreamFormatError(OrizuruError):
    """A response body that does not follow the vendor's format."""
    error_code: ClassVar[str] = "vendor_stream"


class APIError(OrizuruError):
    error_code: ClassVar[str] = "vendor_error"

    def __init__(self, message: str, *, vendor: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.vendor = vendor


class APIConnectionError(APIError):
    error_code: ClassVar[str] = "vendor_unreachable"

    def __init__(self, message: str = "Connection error.", *, vendor: str | None = None) -> None:
        super().__init__(message, vendor=vendor)


class APITimeoutError(APIConnectionError):
    error_code: ClassVar[str] = "vendor_timeout"

    def __init__(self, message: str = "Request timed out.", *, vendor: str | None = None) -> None:
        super().__init__(message, vendor=vendor)


class APIStatusError(APIError):
    error_code: ClassVar[str] = "vendor_error"
    status: int

    def __init__(
        self,
        vendor_message: str,
        *,
        vendor: str,
        status: int,
        type: str | None = None,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> None:
        self.status = status
        self.type = type
        self.vendor_message = vendor_message
        self.headers = {k.lower(): v for k, v in (headers or {}).items()}
        self.body = body
        kind = f" {type}" if type else ""
        super().__init__(f"{vendor} {status}{kind}: {vendor_message}", vendor=vendor)


class BadRequestError(APIStatusError):
    error_code: ClassVar[str] = "vendor_bad_request"


class AuthenticationError(APIStatusError):
    error_code: ClassVar[str] = "vendor_auth"


class PermissionDeniedError(APIStatusError):
    error_code: ClassVar[str] = "vendor_permission"


class NotFoundError(APIStatusError):
    error_code: ClassVar[str] = "vendor_not_found"


class ConflictError(APIStatusError):
    error_code: ClassVar[str] = "vendor_error"


class RequestTooLargeError(APIStatusError):
    error_code: ClassVar[str] = "vendor_too_large"


class UnprocessableEntityError(APIStatusError):
    error_code: ClassVar[str] = "vendor_bad_request"


class RateLimitError(APIStatusError):
    error_code: ClassVar[str] = "vendor_rate_limit"


class OverloadedError(APIStatusError):
    error_code: ClassVar[str] = "vendor_overloaded"


class InternalServerError(APIStatusError):
    error_code: ClassVar[str] = "vendor_server"


class StreamedError(APIStatusError):
    error_code: ClassVar[str] = "vendor_error"


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: RequestTooLargeError,
    422: UnprocessableEntityError,
    429: RateLimitError,
    529: OverloadedError,
}


def status_error_class(status: int, type: str | None = None) -> type[APIStatusError]:
    """The class for an HTTP status; for an error inside a 200 stream, chosen by its type."""
    if status == 200:
        return OverloadedError if type == "overloaded_error" else StreamedError
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return InternalServerError if status >= 500 else APIStatusError


class InvalidParamsError(OrizuruError, ValueError):
    """A method's params are not what it takes (:mod:`pycore.contract.params`). The message names each
    field and its problem; ``details`` lists them as ``{"errors": [{"field", "problem"}]}``."""

    error_code: ClassVar[str] = "invalid_params"

    def __init__(self, message: str, *, errors: list[dict[str, str]]) -> None:
        super().__init__(message)
        self.details: dict[str, Any] = {"errors": errors}
