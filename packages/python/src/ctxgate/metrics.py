"""What a vector store's scores are: the request's vector_metric.

The gate turns every vector score into a similarity by the request's
vector_metric (docs/decision.md has the table of vector stores). A score
sent under the wrong one is misread: distances sent as cosine similarities
make the closest passage look like the weakest. These helpers name the
metric for the common stores, from the store's own setting.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

__all__ = ["VECTOR_METRICS", "RERANK_SCALES", "vector_metric_for", "vector_metric_of", "convert_elasticsearch_score"]

VECTOR_METRICS = ("cosine", "dot", "l2", "l2_squared", "cosine_distance", "negative_dot")
RERANK_SCALES = ("probability", "logit")

# (store, its metric setting) -> the vector_metric of the score the store
# (or LangChain's similarity_search_with_score over it) returns. Keys are
# lower case; docs/decision.md has the same table with its sources.
_TABLE: Dict[Tuple[str, str], str] = {
    ("pinecone", "cosine"): "cosine",
    ("pinecone", "dotproduct"): "dot",
    ("pinecone", "euclidean"): "l2_squared",
    ("milvus", "cosine"): "cosine",
    ("milvus", "ip"): "dot",
    ("milvus", "l2"): "l2_squared",
    ("qdrant", "cosine"): "cosine",
    ("qdrant", "dot"): "dot",
    ("qdrant", "euclid"): "l2",
    ("pgvector", "<=>"): "cosine_distance",
    ("pgvector", "cosine"): "cosine_distance",
    ("pgvector", "<#>"): "negative_dot",
    ("pgvector", "inner"): "negative_dot",
    ("pgvector", "max_inner_product"): "negative_dot",
    ("pgvector", "<->"): "l2",
    ("pgvector", "l2"): "l2",
    ("pgvector", "euclidean"): "l2",
    ("faiss", "indexflatip"): "dot",
    ("faiss", "max_inner_product"): "dot",
    ("faiss", "indexflatl2"): "l2_squared",
    ("faiss", "euclidean_distance"): "l2_squared",
    ("chroma", "l2"): "l2_squared",
    ("chroma", "cosine"): "cosine_distance",
    ("weaviate", "cosine"): "cosine_distance",
    ("weaviate", "dot"): "negative_dot",
    ("weaviate", "l2-squared"): "l2_squared",
    ("hnswlib", "cosine"): "cosine_distance",
    ("hnswlib", "l2"): "l2_squared",
}


def vector_metric_for(store: str, setting: str) -> str:
    """The vector_metric for a store's score under its metric setting.

    vector_metric_for("chroma", "l2") is "l2_squared" (Chroma's default
    space reports squared distances); ("pgvector", "<#>") is
    "negative_dot". Chroma's "ip" space and Elasticsearch/OpenSearch
    scores are transforms, not a metric: convert them first (Chroma ip:
    dot = 1 - distance, then "dot"; convert_elasticsearch_score). A
    combination the table does not know raises ValueError.
    """
    key = (store.strip().lower(), setting.strip().lower())
    if key in _TABLE:
        return _TABLE[key]
    known = ", ".join(f"{s} {m}" for s, m in sorted(_TABLE))
    raise ValueError(f"no vector_metric known for {store!r} with {setting!r}; known: {known}")


def vector_metric_of(store: Any) -> Optional[str]:
    """The vector_metric of a LangChain vector store's similarity_search_with_score, read from the store.

    Chroma (langchain_chroma): the collection's hnsw:space (l2 by
    default: squared distances; cosine: cosine distances; ip is 1 - dot,
    which needs converting, so None). FAISS (langchain_community): its
    distance_strategy (EUCLIDEAN_DISTANCE by default: IndexFlatL2's squared
    distances; MAX_INNER_PRODUCT: inner products, cosines when the store
    normalizes). None when the store does not say; then set vector_metric
    yourself (vector_metric_for).
    """
    collection = getattr(store, "_collection", None)
    metadata = getattr(collection, "metadata", None)
    if collection is not None and (metadata is None or isinstance(metadata, dict)):
        space = (metadata or {}).get("hnsw:space", "l2")
        return {"l2": "l2_squared", "cosine": "cosine_distance"}.get(space)
    strategy = getattr(store, "distance_strategy", None)
    if strategy is not None:
        name = str(getattr(strategy, "value", strategy)).upper()
        if name.endswith("EUCLIDEAN_DISTANCE"):
            return "l2_squared"
        if name.endswith("MAX_INNER_PRODUCT") or name.endswith("DOT_PRODUCT"):
            return "cosine" if getattr(store, "_normalize_L2", False) else "dot"
        if name.endswith("COSINE"):
            return "cosine"
    return None


_ES: Dict[str, Tuple[str, Callable[[float], float]]] = {
    "l2_norm": ("l2_squared", lambda s: 1 / s - 1),  # _score = 1 / (1 + d²)
    "cosine": ("cosine", lambda s: 2 * s - 1),  # _score = (1 + cos) / 2
    "dot_product": ("cosine", lambda s: 2 * s - 1),  # unit vectors: (1 + dot) / 2
    "max_inner_product": ("dot", lambda s: s - 1 if s >= 1 else 1 - 1 / s),
    # OpenSearch k-NN spaces: l2 (squared) 1 / (1 + d); cosinesimil (2 - d) / 2;
    # innerproduct as max_inner_product.
    "opensearch:l2": ("l2_squared", lambda s: 1 / s - 1),
    "opensearch:cosinesimil": ("cosine", lambda s: 2 * s - 1),
    "opensearch:innerproduct": ("dot", lambda s: s - 1 if s >= 1 else 1 - 1 / s),
}


def convert_elasticsearch_score(similarity: str, score: float) -> Tuple[str, float]:
    """An Elasticsearch kNN _score (or an OpenSearch one: "opensearch:l2", ...) as (vector_metric, value).

    Elasticsearch transforms the similarity into a positive _score; this
    undoes it: convert_elasticsearch_score("cosine", 0.95) is ("cosine", 0.9).
    """
    if similarity not in _ES:
        raise ValueError(f"unknown similarity {similarity!r}; known: {', '.join(_ES)}")
    metric, f = _ES[similarity]
    return metric, f(score)
