"""The gate's request, decision and validation JSON as dataclasses.

Field for field as docs/decision.md describes them (schema version 1).
Requests serialise with to_dict() (absent members left out: a score that
is present is used even when it is 0, an absent one is absent); answers
parse with from_dict(), which ignores members it does not know, so a newer
server does not break an older client.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Mapping, Optional

__all__ = [
    "Scores",
    "Chunk",
    "GateRequest",
    "DecisionChunk",
    "Prompt",
    "Refusal",
    "DecisionWarning",
    "GapChunk",
    "GapEvent",
    "PolicyRef",
    "Decision",
    "Validation",
    "DecisionHeaders",
    "GateResponse",
    "Feedback",
    "PolicyInfo",
    "Health",
]


def _compact(obj: Any) -> Dict[str, Any]:
    """A request dataclass as a dict, without the members that are None."""
    out: Dict[str, Any] = {}
    for f in fields(obj):
        v = getattr(obj, f.name)
        if v is None:
            continue
        if hasattr(v, "to_dict"):
            v = v.to_dict()
        elif isinstance(v, list):
            v = [x.to_dict() if hasattr(x, "to_dict") else ([y.to_dict() for y in x] if isinstance(x, list) else x) for x in v]
        out[f.name] = v
    return out


# ---- the request ----


@dataclass
class Scores:
    """Retriever scores of one chunk (docs/decision.md, "Chunk")."""

    vector: Optional[float] = None
    bm25: Optional[float] = None
    rerank: Optional[float] = None
    rrf: Optional[float] = None
    boosted: Optional[float] = None
    graph: Optional[float] = None
    sparse: Optional[float] = None
    """A learned-sparse retriever's raw score (SPLADE, ELSER): >= 0, unbounded."""

    def to_dict(self) -> Dict[str, Any]:
        return _compact(self)


@dataclass
class Chunk:
    """One retrieved chunk, in retriever order."""

    text: Optional[str] = None
    id: Optional[str] = None
    doc_id: Optional[str] = None
    title: Optional[str] = None
    scores: Optional[Scores] = None
    updated_at: Optional[str] = None
    trust: Optional[float] = None
    untrusted: Optional[bool] = None
    embedding: Optional[List[float]] = None
    temperature: Optional[float] = None
    metadata: Any = None

    def to_dict(self) -> Dict[str, Any]:
        return _compact(self)


@dataclass
class GateRequest:
    """The question and what the retriever returned."""

    query: str
    chunks: Optional[List[Chunk]] = None
    results_per_query: Optional[List[List[Chunk]]] = None
    query_embedding: Optional[List[float]] = None
    now: Optional[str] = None
    vector_metric: Optional[str] = None
    """How scores.vector were measured: cosine (the default), dot, l2,
    l2_squared, cosine_distance or negative_dot (vector_metric_for names
    each store's)."""
    rerank_scale: Optional[str] = None
    """What scores.rerank are: probability or logit (default: by value)."""

    def to_dict(self) -> Dict[str, Any]:
        return _compact(self)


# ---- the decision ----


def _opt_float(m: Mapping[str, Any], k: str) -> Optional[float]:
    v = m.get(k)
    return None if v is None else float(v)


@dataclass(frozen=True)
class DecisionChunk:
    """A chunk as the decision reports it: kept ones first, in S order."""

    id: str
    doc_id: str
    tag: str
    kept: bool
    reason: str
    score: float
    quality: Optional[float] = None
    vector: Optional[float] = None
    bm25: Optional[float] = None
    fused: Optional[float] = None

    @classmethod
    def from_dict(cls, m: Mapping[str, Any]) -> "DecisionChunk":
        return cls(
            id=m.get("id", ""),
            doc_id=m.get("doc_id", ""),
            tag=m.get("tag", ""),
            kept=bool(m.get("kept", False)),
            reason=m.get("reason", ""),
            score=float(m.get("score", 0)),
            quality=_opt_float(m, "quality"),
            vector=_opt_float(m, "vector"),
            bm25=_opt_float(m, "bm25"),
            fused=_opt_float(m, "fused"),
        )


@dataclass(frozen=True)
class Prompt:
    instructions: str
    sources: str
    minimal: str

    @classmethod
    def from_dict(cls, m: Mapping[str, Any]) -> "Prompt":
        return cls(m.get("instructions", ""), m.get("sources", ""), m.get("minimal", ""))


@dataclass(frozen=True)
class Refusal:
    type: str
    message: str

    @classmethod
    def from_dict(cls, m: Mapping[str, Any]) -> "Refusal":
        return cls(m.get("type", ""), m.get("message", ""))


@dataclass(frozen=True)
class GapChunk:
    id: str
    doc_id: str
    score: float

    @classmethod
    def from_dict(cls, m: Mapping[str, Any]) -> "GapChunk":
        return cls(m.get("id", ""), m.get("doc_id", ""), float(m.get("score", 0)))


@dataclass(frozen=True)
class GapEvent:
    """A knowledge-gap event: refusal_hard, low_confidence, refusal_soft."""

    kind: str
    query: str
    confidence: Optional[float] = None
    signals: Dict[str, float] = field(default_factory=dict)
    top_chunks: List[GapChunk] = field(default_factory=list)
    query_embedding: Optional[List[float]] = None

    @classmethod
    def from_dict(cls, m: Mapping[str, Any]) -> "GapEvent":
        return cls(
            kind=m.get("kind", ""),
            query=m.get("query", ""),
            confidence=_opt_float(m, "confidence"),
            signals=dict(m.get("signals") or {}),
            top_chunks=[GapChunk.from_dict(c) for c in m.get("top_chunks") or []],
            query_embedding=m.get("query_embedding"),
        )


@dataclass(frozen=True)
class DecisionWarning:
    """Something about the request the gate decided despite (docs/decision.md, "warnings")."""

    code: str  # scores_look_like_distances | scores_look_like_similarities | embeddings_not_unit_length
    message: str

    @classmethod
    def from_dict(cls, m: Mapping[str, Any]) -> "DecisionWarning":
        return cls(m.get("code", ""), m.get("message", ""))


@dataclass(frozen=True)
class PolicyRef:
    name: str
    version: str
    sha256: str

    @classmethod
    def from_dict(cls, m: Mapping[str, Any]) -> "PolicyRef":
        return cls(m.get("name", ""), m.get("version", ""), m.get("sha256", ""))


@dataclass(frozen=True)
class Decision:
    """The gate's decision (docs/decision.md, "Decision")."""

    action: str  # inject | caveat | fallback | refuse
    level: str  # sufficient | partial | insufficient
    confidence: float
    band: str
    interpretation: str
    flag_for_review: bool
    query_type: str
    signals: Dict[str, float]
    chunks: List[DecisionChunk]
    prompt: Optional[Prompt]
    caveat: str
    refusal: Optional[Refusal]
    missing_aspects: List[str]
    confidence_factors: List[str]
    recommendations: List[str]
    gap_event: Optional[GapEvent]
    policy: PolicyRef
    warnings: List[DecisionWarning] = field(default_factory=list)
    """Empty unless the gate warns (the JSON leaves the key out then)."""

    @classmethod
    def from_dict(cls, m: Mapping[str, Any]) -> "Decision":
        return cls(
            action=m["action"],
            level=m.get("level", ""),
            confidence=float(m.get("confidence", 0)),
            band=m.get("band", ""),
            interpretation=m.get("interpretation", ""),
            flag_for_review=bool(m.get("flag_for_review", False)),
            query_type=m.get("query_type", ""),
            signals=dict(m.get("signals") or {}),
            chunks=[DecisionChunk.from_dict(c) for c in m.get("chunks") or []],
            prompt=Prompt.from_dict(m["prompt"]) if m.get("prompt") else None,
            caveat=m.get("caveat", ""),
            refusal=Refusal.from_dict(m["refusal"]) if m.get("refusal") else None,
            missing_aspects=list(m.get("missing_aspects") or []),
            confidence_factors=list(m.get("confidence_factors") or []),
            recommendations=list(m.get("recommendations") or []),
            gap_event=GapEvent.from_dict(m["gap_event"]) if m.get("gap_event") else None,
            policy=PolicyRef.from_dict(m.get("policy") or {}),
            warnings=[DecisionWarning.from_dict(w) for w in m.get("warnings") or []],
        )

    @property
    def kept(self) -> List[DecisionChunk]:
        """The kept chunks, S1 first."""
        return [c for c in self.chunks if c.kept]

    @property
    def uses_sources(self) -> bool:
        """inject or caveat: the model gets the kept sources in the constrained prompt."""
        return self.action in ("inject", "caveat")


@dataclass(frozen=True)
class Validation:
    """The answer check (docs/decision.md, "Answer validation")."""

    soft_refusal: bool
    cited: List[str]
    unknown: List[str]
    uncited_sentences: List[str]
    gap_event: Optional[GapEvent]

    @classmethod
    def from_dict(cls, m: Mapping[str, Any]) -> "Validation":
        return cls(
            soft_refusal=bool(m.get("soft_refusal", False)),
            cited=list(m.get("cited") or []),
            unknown=list(m.get("unknown") or []),
            uncited_sentences=list(m.get("uncited_sentences") or []),
            gap_event=GapEvent.from_dict(m["gap_event"]) if m.get("gap_event") else None,
        )


# ---- what the server adds ----


@dataclass(frozen=True)
class DecisionHeaders:
    """The X-Ctxgate-* decision headers (the same names as the Envoy filter's)."""

    action: str
    level: str
    confidence: str  # the decision's digits
    policy: str  # name@version
    refusal: str  # "hard" or ""


@dataclass(frozen=True)
class GateResponse:
    """A decision from ctxgate serve: the decision, its id, the exact bytes and the headers."""

    decision: Decision
    decision_id: str
    raw: bytes
    headers: DecisionHeaders


@dataclass(frozen=True)
class Feedback:
    decision_id: str
    rating: Optional[str]  # this feedback's rating, None when it gave none
    gap_event: bool  # whether a knowledge-gap event was written
    answer_in_sources: Optional[bool] = None  # this feedback's verdict, None when it gave none
    replaced: bool = False  # this feedback replaced an earlier value
    recorded: bool = False  # the server wrote it to its feedback log (serve --feedback-log)

    @classmethod
    def from_dict(cls, m: Mapping[str, Any]) -> "Feedback":
        a = m.get("answer_in_sources")
        return cls(m.get("decision_id", ""), m.get("rating"), bool(m.get("gap_event", False)),
                   None if a is None else bool(a), bool(m.get("replaced", False)), bool(m.get("recorded", False)))


@dataclass(frozen=True)
class PolicyInfo:
    policy: PolicyRef
    source: str
    loaded_at: str
    document: Dict[str, Any]

    @classmethod
    def from_dict(cls, m: Mapping[str, Any]) -> "PolicyInfo":
        return cls(PolicyRef.from_dict(m.get("policy") or {}), m.get("source", ""), m.get("loaded_at", ""), dict(m.get("document") or {}))


@dataclass(frozen=True)
class Health:
    status: str
    policy: PolicyRef
    module: str
    pool: Dict[str, int]

    @classmethod
    def from_dict(cls, m: Mapping[str, Any]) -> "Health":
        return cls(m.get("status", ""), PolicyRef.from_dict(m.get("policy") or {}), m.get("module", ""), dict(m.get("pool") or {}))
