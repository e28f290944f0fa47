"""The client against a real `ctxgate serve`, started here on an ephemeral port.

Run from the repository (after `make build`): scripts/test-python.sh, or
  PYTHONPATH=packages/python/src python3 -m unittest discover -s packages/python/tests
CTXGATE_BIN overrides bin/ctxgate, CTXGATE_ROOT the repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import List, Optional

from ctxgate import (
    BadRequestError,
    Chunk,
    Client,
    CtxgateError,
    Decision,
    Feedback,
    GateConnectionError,
    GateRequest,
    GateTimeoutError,
    LimitError,
    NotFoundError,
    Scores,
    convert_elasticsearch_score,
    vector_metric_for,
    vector_metric_of,
)

ROOT = Path(os.environ.get("CTXGATE_ROOT") or Path(__file__).resolve().parents[3])
BIN = Path(os.environ.get("CTXGATE_BIN") or ROOT / "bin" / "ctxgate")
PKG = Path(__file__).resolve().parents[1]


class Serve:
    """bin/ctxgate serve on 127.0.0.1:0; the address comes from its log line."""

    def __init__(self, *args: str, timeout: float = 30.0) -> None:
        self.proc = subprocess.Popen(
            [str(BIN), "serve", "--listen", "127.0.0.1:0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        self.log: List[str] = []
        found = threading.Event()
        self.url = ""

        def read() -> None:
            assert self.proc.stdout is not None
            for line in iter(self.proc.stdout.readline, b""):
                text = line.decode("utf-8", "replace")
                self.log.append(text)
                # "listening on http://127.0.0.1:PORT" (or a structured line with the address).
                m = re.search(r"listening\b.*?127\.0\.0\.1:(\d+)", text, re.IGNORECASE)
                if m and not found.is_set():
                    self.url = f"http://127.0.0.1:{m.group(1)}"
                    found.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        if not found.wait(timeout):
            self.stop()
            raise RuntimeError("ctxgate serve did not start:\n" + "".join(self.log))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._reader.join(10)
        if self.proc.stdout:
            self.proc.stdout.close()


def golden(policy: str) -> List[tuple]:
    """(name, request bytes, decision bytes) for every golden case of a policy."""
    out = []
    for req in sorted((ROOT / "testdata" / "requests" / policy).glob("*.json")):
        want = (ROOT / "testdata" / "decisions" / policy / req.name).read_bytes()
        out.append((req.stem, req.read_bytes(), want.rstrip(b"\n")))
    return out


def as_dataclasses(req: dict) -> GateRequest:
    """A golden request rebuilt from the package's dataclasses."""

    def chunk(c: dict) -> Chunk:
        c = dict(c)
        if "scores" in c:
            c["scores"] = Scores(**c["scores"])
        return Chunk(**c)

    r = dict(req)
    if "chunks" in r:
        r["chunks"] = [chunk(c) for c in r["chunks"]]
    if "results_per_query" in r:
        r["results_per_query"] = [[chunk(c) for c in lst] for lst in r["results_per_query"]]
    return GateRequest(**r)


serve: Optional[Serve] = None
tmp = ""


def setUpModule() -> None:
    global serve, tmp
    if not BIN.exists():
        raise RuntimeError(f"{BIN} is missing: run make build")
    tmp = tempfile.mkdtemp(prefix="ctxgate-py-")
    serve = Serve("--gap-log", os.path.join(tmp, "gaps.jsonl"), "--feedback-log", os.path.join(tmp, "feedback.jsonl"),
                  "--max-body-bytes", "65536")


def tearDownModule() -> None:
    if serve:
        serve.stop()
    shutil.rmtree(tmp, ignore_errors=True)


def gap_lines() -> List[dict]:
    try:
        text = Path(tmp, "gaps.jsonl").read_text()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines() if line]


def wait_for(cond, what: str) -> None:
    """Polls cond for up to 5 s (the server writes gap events after answering)."""
    for _ in range(100):
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within 5 s: {what}; gap log: {gap_lines()}")


class GateTest(unittest.TestCase):
    def setUp(self) -> None:
        assert serve is not None
        self.client = Client(serve.url + "/", timeout=10)

    def test_golden_bytes_headers_and_ids(self) -> None:
        cases = golden("default")
        self.assertGreaterEqual(len(cases), 5)
        ids = set()
        errors = 0
        for name, req, want in cases:
            with self.subTest(name):
                if want.startswith(b'{"error":'):
                    # A request the gate refuses: the golden error JSON.
                    errors += 1
                    with self.assertRaises(BadRequestError) as cm:
                        self.client.gate(req)
                    self.assertEqual((cm.exception.body, cm.exception.status), (want, 422))
                    continue
                res = self.client.gate(req)
                self.assertEqual(res.raw, want)
                d = json.loads(want)
                self.assertEqual(res.decision, Decision.from_dict(d))
                self.assertEqual(res.decision.action, d["action"])
                self.assertEqual(res.headers.action, d["action"])
                self.assertEqual(res.headers.level, d["level"])
                self.assertEqual(res.headers.confidence, re.search(rb'"confidence":([^,]*)', want).group(1).decode())
                self.assertEqual(res.headers.policy, f"{d['policy']['name']}@{d['policy']['version']}")
                self.assertEqual(res.headers.refusal, "hard" if d["action"] == "refuse" else "")
                self.assertEqual([c.tag for c in res.decision.kept], [c["tag"] for c in d["chunks"] if c["kept"]])
                self.assertEqual(res.decision.uses_sources, d["action"] in ("inject", "caveat"))
                ids.add(res.decision_id)
        self.assertEqual(len(ids), len(cases) - errors)
        self.assertGreater(errors, 0, "no golden error case: the error path went unchecked")

    def test_request_dataclasses_decide_like_the_json(self) -> None:
        # Every golden request, rebuilt from the dataclasses, serialises to the same JSON value.
        for policy in sorted(p.name for p in (ROOT / "testdata" / "requests").iterdir()):
            for name, req, _ in golden(policy):
                with self.subTest(f"{policy}/{name}"):
                    self.assertEqual(as_dataclasses(json.loads(req)).to_dict(), json.loads(req))
        # And decides to the golden bytes, as a dataclass, a dict and text.
        for name, req, want in golden("default"):
            if want.startswith(b'{"error":'):
                continue
            with self.subTest(name):
                self.assertEqual(self.client.gate(as_dataclasses(json.loads(req))).raw, want)
                self.assertEqual(self.client.gate(json.loads(req)).raw, want)
                self.assertEqual(self.client.gate(req.decode()).raw, want)

    def test_present_zero_scores_are_sent(self) -> None:
        r = GateRequest(query="q", chunks=[Chunk(text="a", scores=Scores(vector=0.0, bm25=0.0))])
        self.assertEqual(r.to_dict(), {"query": "q", "chunks": [{"text": "a", "scores": {"vector": 0.0, "bm25": 0.0}}]})
        d = self.client.gate(r).decision
        self.assertEqual(d.chunks[0].vector, 0.0)

    def test_another_policy(self) -> None:
        other = Serve("--policy", "support-agent")
        try:
            c = Client(other.url)
            for name, req, want in golden("support-agent"):
                if want.startswith(b'{"error":'):
                    continue
                with self.subTest(name):
                    self.assertEqual(c.gate(as_dataclasses(json.loads(req))).raw, want)
            self.assertEqual(c.policy().policy.name, "support-agent")
        finally:
            other.stop()

    def test_validate_with_decision_id_logs_a_soft_refusal(self) -> None:
        _, req, _ = next(c for c in golden("default") if c[0] == "inject")
        res = self.client.gate(req)
        v = self.client.validate("Open Settings and choose Security [S1]. Then [S7].", ["S1"], decision_id=res.decision_id)
        self.assertEqual(v.cited, ["S1"])
        self.assertEqual(v.unknown, ["S7"])
        self.assertFalse(v.soft_refusal)
        refusal = "I don't have enough information to answer this from the provided sources."
        s = self.client.validate(refusal, ["S1"], query="How do I reset my password?", decision_id=res.decision_id)
        self.assertTrue(s.soft_refusal)
        self.assertEqual(s.gap_event.kind, "refusal_soft")
        wait_for(lambda: any(e["kind"] == "refusal_soft" and e["decision_id"] == res.decision_id for e in gap_lines()), "refusal_soft")

    def test_feedback(self) -> None:
        _, req, _ = next(c for c in golden("default") if c[0] == "caveat")
        did = self.client.gate(req).decision_id
        down = self.client.feedback(did, "down", "the answer was outdated")
        self.assertEqual((down.decision_id, down.rating, down.gap_event), (did, "down", True))
        wait_for(lambda: any(e["kind"] == "thumbs_down" and e["decision_id"] == did and e.get("comment") == "the answer was outdated" for e in gap_lines()), "thumbs_down")
        self.assertFalse(self.client.feedback(did, "up").gap_event)
        with self.assertRaises(NotFoundError) as cm:
            self.client.feedback("no-such-id", "down")
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.field), (404, "not_found", "decision_id"))
        with self.assertRaises(BadRequestError) as cm:
            self.client.feedback(did, "meh")
        self.assertEqual((cm.exception.status, cm.exception.field), (422, "rating"))
        # The calibration verdict, alone and replaced.
        v = self.client.feedback(did, answer_in_sources=False)
        self.assertEqual((v.answer_in_sources, v.rating, v.gap_event), (False, None, False))
        again = self.client.feedback(did, answer_in_sources=True)
        self.assertEqual((again.answer_in_sources, again.replaced, again.recorded), (True, True, True))
        wait_for(lambda: did in Path(tmp, "feedback.jsonl").read_text(), "the feedback log line")
        # A server without --feedback-log answers recorded: false.
        self.assertFalse(Feedback.from_dict({"decision_id": did, "rating": "up", "recorded": False}).recorded)

    def test_errors_carry_code_field_status_and_body(self) -> None:
        body = b'{"query":"q","chunks":[{"text":"a"},{"text":"b","scores":{"vector":2}}]}'
        with self.assertRaises(BadRequestError) as cm:
            self.client.gate(body)
        e = cm.exception
        self.assertEqual((e.code, e.field, e.status), ("bad_field", "chunks[1].scores.vector", 422))
        self.assertEqual(json.loads(e.body)["error"]["field"], e.field)
        self.assertIn("chunks[1].scores.vector", str(e))
        with self.assertRaises(BadRequestError) as cm:
            self.client.gate(b"{")
        self.assertEqual((cm.exception.code, cm.exception.status), ("bad_json", 400))
        with self.assertRaises(LimitError) as cm:
            self.client.gate({"query": "x" * 70000})
        self.assertEqual((cm.exception.status, cm.exception.field), (413, "body"))
        with self.assertRaises(BadRequestError) as cm:
            self.client.validate(3, [])  # type: ignore[arg-type]
        self.assertEqual(cm.exception.code, "bad_answer")
        self.assertIsInstance(cm.exception, CtxgateError)

    def test_policy_and_health(self) -> None:
        p = self.client.policy()
        self.assertEqual(p.policy.name, "default")
        self.assertEqual(p.document["name"], "default")
        self.assertRegex(p.loaded_at, r"^\d{4}-\d\d-\d\dT")
        h = self.client.health()
        self.assertEqual(h.status, "ok")
        self.assertEqual(h.policy, p.policy)


class ScoreConventionTest(unittest.TestCase):
    """vector_metric and rerank_scale: the client states them for requests that do not, and names each store's."""

    def setUp(self) -> None:
        assert serve is not None
        self.url = serve.url

    def test_the_clients_vector_metric(self) -> None:
        restated = (ROOT / "testdata" / "requests" / "default" / "inject.l2_squared.json").read_bytes()
        want = (ROOT / "testdata" / "decisions" / "default" / "inject.l2_squared.json").read_bytes().rstrip(b"\n")
        doc = json.loads(restated)
        del doc["vector_metric"]
        c = Client(self.url, vector_metric="l2_squared", rerank_scale="logit")
        for req in (doc, json.dumps(doc), json.dumps(doc).encode(), as_dataclasses(doc)):
            with self.subTest(type(req).__name__):
                self.assertEqual(c.gate(req).raw, want)
        # Per call, and the request's own win.
        self.assertEqual(Client(self.url).gate(doc, vector_metric="l2_squared").raw, want)
        cosines = json.loads((ROOT / "testdata" / "requests" / "default" / "inject.json").read_bytes())
        cosines["vector_metric"] = "cosine"
        plain = (ROOT / "testdata" / "decisions" / "default" / "inject.json").read_bytes().rstrip(b"\n")
        self.assertEqual(c.gate(cosines).raw, plain)
        for kw in ({"vector_metric": "ip"}, {"rerank_scale": "odds"}):
            with self.assertRaises(ValueError):
                Client(self.url, **kw)

    def test_warnings(self) -> None:
        c = Client(self.url)
        req = (ROOT / "testdata" / "requests" / "default" / "distances_sent_as_cosine.json").read_bytes()
        d = c.gate(req).decision
        self.assertEqual([w.code for w in d.warnings], ["scores_look_like_distances"])
        self.assertIn("set vector_metric to cosine_distance, l2 or l2_squared", d.warnings[0].message)
        inject = (ROOT / "testdata" / "requests" / "default" / "inject.json").read_bytes()
        self.assertEqual(c.gate(inject).decision.warnings, [])
        self.assertEqual(Decision.from_dict(json.loads(c.gate(inject).raw)).warnings, [])

    def test_store_tables(self) -> None:
        for store, setting, want in [
            ("Pinecone", "dotproduct", "dot"), ("pinecone", "euclidean", "l2_squared"), ("milvus", "IP", "dot"),
            ("milvus", "L2", "l2_squared"), ("qdrant", "Euclid", "l2"), ("pgvector", "<=>", "cosine_distance"),
            ("pgvector", "<#>", "negative_dot"), ("pgvector", "<->", "l2"), ("faiss", "IndexFlatL2", "l2_squared"),
            ("faiss", "IndexFlatIP", "dot"), ("chroma", "l2", "l2_squared"), ("chroma", "cosine", "cosine_distance"),
            ("weaviate", "dot", "negative_dot"),
        ]:
            self.assertEqual(vector_metric_for(store, setting), want, (store, setting))
        with self.assertRaises(ValueError):
            vector_metric_for("chroma", "ip")
        for sim, score, want in [("cosine", 0.95, ("cosine", 0.9)), ("l2_norm", 0.5, ("l2_squared", 1.0)),
                                 ("max_inner_product", 96.0, ("dot", 95.0)), ("max_inner_product", 0.5, ("dot", -1.0)),
                                 ("opensearch:cosinesimil", 1.0, ("cosine", 1.0))]:
            metric, v = convert_elasticsearch_score(sim, score)
            self.assertEqual(metric, want[0])
            self.assertAlmostEqual(v, want[1], places=12)

    def test_vector_metric_of(self) -> None:
        # Stand-ins holding what langchain_chroma's Chroma and
        # langchain_community's FAISS hold (not installed here).
        class Collection:
            def __init__(self, metadata):
                self.metadata = metadata

        class Store:
            def __init__(self, **kw):
                self.__dict__.update(kw)

        class Strategy:
            def __init__(self, value):
                self.value = value

        for store, want in [
            (Store(_collection=Collection(None)), "l2_squared"),
            (Store(_collection=Collection({"hnsw:space": "cosine"})), "cosine_distance"),
            (Store(_collection=Collection({"hnsw:space": "ip"})), None),
            (Store(distance_strategy=Strategy("EUCLIDEAN_DISTANCE")), "l2_squared"),
            (Store(distance_strategy=Strategy("MAX_INNER_PRODUCT")), "dot"),
            (Store(distance_strategy=Strategy("MAX_INNER_PRODUCT"), _normalize_L2=True), "cosine"),
            (Store(), None),
        ]:
            self.assertEqual(vector_metric_of(store), want, store.__dict__)


class FailureTest(unittest.TestCase):
    def test_gate_deadline_is_a_timeout_with_retry_after(self) -> None:
        slow = Serve("--gate-timeout", "1ns")
        try:
            with self.assertRaises(GateTimeoutError) as cm:
                Client(slow.url).gate({"query": "How do I reset my password?"})
            e = cm.exception
            self.assertEqual((e.code, e.status), ("timeout", 503))
            self.assertGreaterEqual(e.retry_after or 0, 1)
        finally:
            slow.stop()

    def test_no_server(self) -> None:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        with self.assertRaises(GateConnectionError) as cm:
            Client(f"http://127.0.0.1:{port}").health()
        self.assertEqual((cm.exception.code, cm.exception.status), ("connection", 0))

    def test_a_server_that_never_answers(self) -> None:
        # Accepts connections and says nothing: the client's timeout ends the wait.
        lst = socket.socket()
        lst.bind(("127.0.0.1", 0))
        lst.listen(4)
        try:
            c = Client(f"http://127.0.0.1:{lst.getsockname()[1]}", timeout=0.3)
            t0 = time.monotonic()
            with self.assertRaises(GateTimeoutError) as cm:
                c.gate({"query": "q"})
            self.assertEqual((cm.exception.code, cm.exception.status), ("client_timeout", 0))
            self.assertLess(time.monotonic() - t0, 5)
        finally:
            lst.close()

    def test_bad_base_url(self) -> None:
        for bad in ("127.0.0.1:8080", "ftp://x", "http://"):
            with self.assertRaises(ValueError):
                Client(bad)


class PackageTest(unittest.TestCase):
    def test_metadata_and_standard_library_only(self) -> None:
        # pyproject.toml says what pip installs (test_build.py builds it;
        # scripts/test-install.sh installs it with pip).
        import tomllib

        meta = tomllib.loads((PKG / "pyproject.toml").read_text())
        project = meta["project"]
        import ctxgate

        self.assertEqual(project["name"], "ctxgate")
        self.assertEqual(project["version"], ctxgate.__version__)
        self.assertEqual(project["dependencies"], [])
        self.assertTrue((PKG / "src" / "ctxgate" / "py.typed").exists())
        # What importing the package loads, in a fresh interpreter: itself and the standard library.
        out = subprocess.run(
            [sys.executable, "-c", "import sys, json; before = set(sys.modules); import ctxgate; print(json.dumps(sorted(m for m in set(sys.modules) - before if m.split('.')[0] not in sys.stdlib_module_names)))"],
            env={**os.environ, "PYTHONPATH": str(PKG / "src")},
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
        loaded = json.loads(out)
        self.assertIn("ctxgate.client", loaded)
        self.assertEqual([m for m in loaded if m != "ctxgate" and not m.startswith("ctxgate.")], [])


if __name__ == "__main__":
    unittest.main()
