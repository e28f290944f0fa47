"""The gate's error JSON ({"error": {"code", "message", "field"}}) as exceptions.

Every ctxgate host writes that shape; the client raises one exception per
error, carrying the gate's code, the field it is about and the HTTP status.
"""

from __future__ import annotations

import json
from typing import Dict, Optional, Type

__all__ = [
    "CtxgateError",
    "BadRequestError",
    "LimitError",
    "PolicyError",
    "GateTimeoutError",
    "NotFoundError",
    "GateConnectionError",
    "error_from_body",
]


class CtxgateError(Exception):
    """An error from the gate or from reaching it.

    code: the gate's error code (bad_json, bad_field, limit, bad_policy,
    bad_answer, timeout, not_found, ...), or the client's own
    (client_timeout, connection). field: the path of the field the error is
    about (``chunks[2].scores.vector``), "" when none. status: the HTTP
    status (0 when no answer came). body: the error JSON as the server sent
    it, when it sent one. retry_after: seconds, from a 503's Retry-After.
    """

    def __init__(
        self,
        code: str,
        message: str,
        field: str = "",
        status: int = 0,
        body: Optional[bytes] = None,
        retry_after: Optional[int] = None,
    ) -> None:
        super().__init__(f"{code}: {field}: {message}" if field else f"{code}: {message}")
        self.code = code
        self.message = message
        self.field = field
        self.status = status
        self.body = body
        self.retry_after = retry_after


class BadRequestError(CtxgateError):
    """The request or answer is not what the gate accepts (bad_json, bad_field, bad_answer)."""


class LimitError(CtxgateError):
    """An input limit was exceeded (limit): too many chunks, too long a text, too large a body."""


class PolicyError(CtxgateError):
    """The server has no valid policy loaded, or the request conflicts with it (bad_policy)."""


class GateTimeoutError(CtxgateError):
    """The server's gate deadline passed (timeout, 503), or the client's own timeout did (client_timeout)."""


class NotFoundError(CtxgateError):
    """An unknown path or decision id (not_found), or gateway mode is off (no_upstream)."""


class GateConnectionError(CtxgateError):
    """The server could not be reached, or the connection broke before an answer (connection)."""


_CLASSES: Dict[str, Type[CtxgateError]] = {
    "bad_json": BadRequestError,
    "bad_field": BadRequestError,
    "bad_answer": BadRequestError,
    "limit": LimitError,
    "bad_policy": PolicyError,
    "timeout": GateTimeoutError,
    "read_timeout": GateTimeoutError,
    "not_found": NotFoundError,
    "no_upstream": NotFoundError,
}


def error_from_body(body: bytes, status: int, retry_after: Optional[int] = None) -> CtxgateError:
    """The exception for an error answer; a body that is not the error JSON gives code "internal"."""
    try:
        e = json.loads(body.decode("utf-8"))["error"]
        code = e["code"]
        if not isinstance(code, str):
            raise TypeError("code")
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        text = body[:200].decode("utf-8", "replace")
        return CtxgateError("internal", f"not the gate's error JSON (HTTP {status}): {text}", status=status, body=body)
    cls = _CLASSES.get(code, CtxgateError)
    return cls(code, str(e.get("message", "")), str(e.get("field", "")), status, body, retry_after)
