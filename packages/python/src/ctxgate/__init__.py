"""ctxgate: a client for `ctxgate serve`, a deterministic retrieval-confidence gate for RAG.

Standard library only. The gate decides inject / caveat / fallback / refuse
for a question and its retrieved chunks; see README.md.
"""

from .client import Client
from .errors import (
    BadRequestError,
    CtxgateError,
    GateConnectionError,
    GateTimeoutError,
    LimitError,
    NotFoundError,
    PolicyError,
)
from .metrics import (
    RERANK_SCALES,
    VECTOR_METRICS,
    convert_elasticsearch_score,
    vector_metric_for,
    vector_metric_of,
)
from .models import (
    Chunk,
    Decision,
    DecisionChunk,
    DecisionWarning,
    DecisionHeaders,
    Feedback,
    GapChunk,
    GapEvent,
    GateRequest,
    GateResponse,
    Health,
    PolicyInfo,
    PolicyRef,
    Prompt,
    Refusal,
    Scores,
    Validation,
)

__version__ = "0.1.0"

__all__ = [
    "Client",
    "CtxgateError",
    "BadRequestError",
    "LimitError",
    "PolicyError",
    "GateTimeoutError",
    "NotFoundError",
    "GateConnectionError",
    "Scores",
    "Chunk",
    "GateRequest",
    "Decision",
    "DecisionChunk",
    "DecisionWarning",
    "VECTOR_METRICS",
    "RERANK_SCALES",
    "vector_metric_for",
    "vector_metric_of",
    "convert_elasticsearch_score",
    "Prompt",
    "Refusal",
    "GapEvent",
    "GapChunk",
    "PolicyRef",
    "Validation",
    "DecisionHeaders",
    "GateResponse",
    "Feedback",
    "PolicyInfo",
    "Health",
]
