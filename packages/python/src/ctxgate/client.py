"""A client for `ctxgate serve` (docs/server.md), standard library only."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union
from urllib.parse import urlsplit

from .errors import GateConnectionError, GateTimeoutError, error_from_body
from .metrics import RERANK_SCALES, VECTOR_METRICS
from .models import Decision, DecisionHeaders, Feedback, GateRequest, GateResponse, Health, PolicyInfo, Validation

__all__ = ["Client"]

RequestLike = Union[GateRequest, Mapping[str, Any], str, bytes]


class Client:
    """A client for ctxgate serve's decision API.

    base_url: the server, e.g. "http://127.0.0.1:8080" (https works too).
    timeout: seconds for connecting and for each read of the answer
    (http.client's socket timeout); a server that says nothing for that
    long raises GateTimeoutError with code "client_timeout".
    headers: sent with every request (e.g. Authorization for a proxy in
    front of the server). ssl_context: for https.

    Each call opens its own connection, so one Client may be shared by
    threads. Proxies from the environment are not used: the gate usually
    runs beside the application.

    vector_metric and rerank_scale: the score conventions of every request
    that states none (docs/decision.md): the vector store's metric
    (vector_metric_of, vector_metric_for name it) and whether rerank scores
    are probabilities or logits. Unset, the server's defaults apply.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8080",
        timeout: float = 10.0,
        headers: Optional[Mapping[str, str]] = None,
        ssl_context: Optional[ssl.SSLContext] = None,
        vector_metric: Optional[str] = None,
        rerank_scale: Optional[str] = None,
    ) -> None:
        u = urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port
        self._prefix = u.path.rstrip("/")
        self.timeout = timeout
        self._headers = dict(headers or {})
        self._ssl = ssl_context
        _check_conventions(vector_metric, rerank_scale)
        self.vector_metric = vector_metric
        self.rerank_scale = rerank_scale

    # ---- the endpoints ----

    def gate(
        self,
        request: RequestLike,
        timeout: Optional[float] = None,
        vector_metric: Optional[str] = None,
        rerank_scale: Optional[str] = None,
    ) -> GateResponse:
        """POST /v1/gate: decides one request (a GateRequest, a dict, or JSON text/bytes).

        vector_metric and rerank_scale (else the client's) are set on a
        request that states none; a request's own always win.
        """
        _check_conventions(vector_metric, rerank_scale)
        conventions = {
            "vector_metric": vector_metric or self.vector_metric,
            "rerank_scale": rerank_scale or self.rerank_scale,
        }
        status, headers, body = self._call("POST", "/v1/gate", _body(request, conventions), {}, timeout)
        h = {k.lower(): v for k, v in headers}
        return GateResponse(
            decision=Decision.from_dict(json.loads(body)),
            decision_id=h.get("x-ctxgate-decision-id", ""),
            raw=body,
            headers=DecisionHeaders(
                action=h.get("x-ctxgate-action", ""),
                level=h.get("x-ctxgate-level", ""),
                confidence=h.get("x-ctxgate-confidence", ""),
                policy=h.get("x-ctxgate-policy", ""),
                refusal=h.get("x-ctxgate-refusal", ""),
            ),
        )

    def validate(
        self,
        answer: str,
        tags: List[str],
        query: Optional[str] = None,
        decision_id: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> Validation:
        """POST /v1/validate: checks a model's answer against the tags its prompt offered.

        With the decision's id, a soft refusal is logged as that decision's knowledge gap.
        """
        payload: Dict[str, Any] = {"answer": answer, "tags": list(tags)}
        if query is not None:
            payload["query"] = query
        extra = {"X-Ctxgate-Decision-Id": decision_id} if decision_id else {}
        _, _, body = self._call("POST", "/v1/validate", json.dumps(payload).encode(), extra, timeout)
        return Validation.from_dict(json.loads(body))

    def feedback(
        self,
        decision_id: str,
        rating: Optional[str] = None,
        comment: Optional[str] = None,
        timeout: Optional[float] = None,
        answer_in_sources: Optional[bool] = None,
    ) -> Feedback:
        """POST /v1/feedback on a decision the server issued (NotFoundError otherwise).

        rating: "up" or "down" (a thumbs-down is a knowledge-gap event).
        answer_in_sources: the verdict calibration learns from (docs/calibration.md):
        True when the answer was in the sources the gate offered, False when not.
        Give at least one; a repeat replaces the earlier value. A server with
        --feedback-token-file needs headers={"Authorization": "Bearer TOKEN"}.
        """
        payload: Dict[str, Any] = {"decision_id": decision_id}
        if rating is not None:
            payload["rating"] = rating
        if answer_in_sources is not None:
            payload["answer_in_sources"] = bool(answer_in_sources)
        if comment is not None:
            payload["comment"] = comment
        _, _, body = self._call("POST", "/v1/feedback", json.dumps(payload).encode(), {}, timeout)
        return Feedback.from_dict(json.loads(body))

    def policy(self, timeout: Optional[float] = None) -> PolicyInfo:
        """GET /v1/policy: the active policy."""
        _, _, body = self._call("GET", "/v1/policy", None, {}, timeout)
        return PolicyInfo.from_dict(json.loads(body))

    def health(self, timeout: Optional[float] = None) -> Health:
        """GET /healthz (a CtxgateError when the server answers 503)."""
        _, _, body = self._call("GET", "/healthz", None, {}, timeout)
        return Health.from_dict(json.loads(body))

    # ---- transport ----

    def _call(
        self,
        method: str,
        path: str,
        body: Optional[bytes],
        headers: Mapping[str, str],
        timeout: Optional[float],
    ) -> Tuple[int, List[Tuple[str, str]], bytes]:
        t = self.timeout if timeout is None else timeout
        url = self.base_url + path
        if self._https:
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(self._host, self._port, timeout=t, context=self._ssl)
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=t)
        h = {**self._headers, **headers, "Accept": "application/json"}
        if body is not None:
            h["Content-Type"] = "application/json"
        try:
            conn.request(method, self._prefix + path, body=body, headers=h)
            res = conn.getresponse()
            data = res.read()
            status, got = res.status, res.getheaders()
        except socket.timeout as e:
            raise GateTimeoutError("client_timeout", f"{method} {url}: no answer within {t} s") from e
        except (OSError, http.client.HTTPException) as e:
            raise GateConnectionError("connection", f"{method} {url}: {e}") from e
        finally:
            conn.close()
        if 200 <= status < 300:
            return status, got, data
        retry = dict((k.lower(), v) for k, v in got).get("retry-after")
        raise error_from_body(data, status, int(retry) if retry and retry.isdigit() else None)


def _check_conventions(vector_metric: Optional[str], rerank_scale: Optional[str]) -> None:
    if vector_metric is not None and vector_metric not in VECTOR_METRICS:
        raise ValueError(f"vector_metric must be one of {', '.join(VECTOR_METRICS)}, not {vector_metric!r}")
    if rerank_scale is not None and rerank_scale not in RERANK_SCALES:
        raise ValueError(f"rerank_scale must be one of {', '.join(RERANK_SCALES)}, not {rerank_scale!r}")


def _body(request: RequestLike, conventions: Optional[Mapping[str, Optional[str]]] = None) -> bytes:
    """The request's JSON, with the conventions it does not state. Bytes
    and text are sent as they are unless a convention is to be added."""
    add = {k: v for k, v in (conventions or {}).items() if v}
    if isinstance(request, (bytes, str)):
        raw = request.encode("utf-8") if isinstance(request, str) else request
        if not add:
            return raw
        try:
            doc = json.loads(raw)
        except ValueError:
            return raw  # the server names what is wrong with it
        if not isinstance(doc, dict):
            return raw
        request = doc
    if isinstance(request, GateRequest):
        doc = request.to_dict()
    elif isinstance(request, Mapping):
        doc = dict(request)
    else:
        raise TypeError(f"a request is a GateRequest, a mapping, str or bytes, not {type(request).__name__}")
    for k, v in add.items():
        if doc.get(k) in (None, ""):
            doc[k] = v
    return json.dumps(doc).encode("utf-8")
