"""Soak of the REST API: mixed search, ingest and reads on loopback for a bounded time.

Starts ``graphrag serve`` as a child process on a free loopback port against the local services of
``--home`` (GRAPHRAG_HOME; the PostgreSQL and Neo4j servers there must already run, with the
``scifact`` collection ingested), waits for ``/ready``, warms each search mode once, then for
``--duration`` seconds runs, concurrently (asyncio + httpx):

* ``--searchers`` search clients, back to back, cycling through the SciFact claims
  (``../shared/eval/scifact/queries.jsonl``) and the modes auto/hybrid/vector/keyword/graph against
  the collection ``scifact``;
* one ingest client that every ~``--ingest-every`` seconds POSTs a small generated document (JSON
  body, a few sentences with people, organisations and places, a unique ``soak://`` source) into the
  dedicated collection ``soak``; sometimes it re-posts a source it created with changed text (an
  update, expected status ``updated``), now and then the same text again (expected ``unchanged``),
  and sometimes DELETEs a document it created;
* one read client, every ~``--read-every`` seconds: ``GET /documents`` (a random page of scifact, or
  the soak collection), ``GET /documents/{id}`` of a scifact document, ``GET /entities?q=``.

Every request is recorded (seconds since the start, kind search/ingest/read, operation, HTTP status,
latency). An error is a non-2xx answer or a transport error (counted per kind, first messages kept).
Legs of 200 search responses whose status is neither ``ok`` nor ``skipped`` (timeouts, errors) are
counted separately. Per ``--window`` seconds (default 60): count, errors, p50/p95/p99 per kind, leg
problems, and the RSS of the API process (with its children), of the PostgreSQL postmaster with its
backends (pid: first line of ``<home>/postgres/data/postmaster.pid``; also PSS, as the backends share
``shared_buffers``) and of Neo4j (pid: ``<home>/neo4j/run/neo4j.pid``), also at the start and the end.

At the end the documents of ``soak`` are deleted through REST, ``GET /stats`` is checked for drift in
``soak`` (waited on up to 30 s while graph writes are pending), the server is stopped, and the
results go to ``bench/results/soak.json`` (or ``--out``). The other collections are only read.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/soak.py                      # 10 minutes, 4 searchers
    HF_HUB_OFFLINE=1 .venv/bin/python bench/soak.py --duration 60 --out bench/results/soak_smoke.json

Run from the repository root.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import re
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402
import psutil  # noqa: E402

from bench.common import REPO, RESULTS, machine, percentiles, read_queries  # noqa: E402

MODES = ("auto", "hybrid", "vector", "keyword", "graph")
KINDS = ("search", "ingest", "read")
SEARCH_COLLECTION = "scifact"
SOAK_COLLECTION = "soak"
ERROR_SAMPLES = 5
EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Timeout)\b.*:")  # last line of a traceback

# -- generated documents ---------------------------------------------------------------------------

FIRST = ("Ada", "Marie", "Alan", "Grace", "Niels", "Lise", "Carl", "Rosalind", "Enrico", "Dorothy", "Werner",
         "Barbara", "Srinivasa", "Emmy", "Linus", "Hedy", "Tim", "Katherine", "Claude", "Rita")
LAST = ("Lovelace", "Curie", "Turing", "Hopper", "Bohr", "Meitner", "Gauss", "Franklin", "Fermi", "Hodgkin",
        "Heisenberg", "McClintock", "Ramanujan", "Noether", "Pauling", "Lamarr", "Berners-Lee", "Johnson",
        "Shannon", "Levi-Montalcini")
CITIES = ("Paris", "London", "Berlin", "Copenhagen", "Vienna", "Rome", "Madrid", "Lisbon", "Stockholm", "Oslo",
          "Zurich", "Boston", "Chicago", "Toronto", "Tokyo", "Kyoto", "Sydney", "Cairo", "Nairobi", "Lima")
ORGS = ("the Royal Society", "the Pasteur Institute", "CERN", "Bell Labs", "the Max Planck Society",
        "the Karolinska Institute", "MIT", "Stanford University", "the University of Cambridge", "Siemens",
        "the European Space Agency", "the World Health Organization")
TOPICS = ("protein folding", "cosmic rays", "gene regulation", "information theory", "radioactivity",
          "crystallography", "neural networks", "malaria vaccines", "quantum optics", "soil bacteria")
TEMPLATES = (
    "{p1} moved from {c1} to {c2} in {year} to join {o1}.",
    "At {o1} in {c1}, {p1} and {p2} studied {t1} for several years.",
    "{p2} presented new results on {t1} at a conference in {c2}.",
    "In {year}, {o2} funded a project on {t2} led by {p1}.",
    "{p1} later wrote that the work in {c1} had changed how {o1} thought about {t2}.",
    "{p2} was born in {c2} and trained at {o2} before visiting {c1}.",
    "The collaboration between {p1} and {p2} on {t1} was announced by {o1} in {c2}.",
)


def make_text(rng: random.Random, serial: int, revision: int) -> tuple[str, str]:
    """A title and a few sentences naming people, organisations and places."""
    def person() -> str:
        return f"{rng.choice(FIRST)} {rng.choice(LAST)}"

    slots = {"p1": person(), "p2": person(), "c1": rng.choice(CITIES), "c2": rng.choice(CITIES),
             "o1": rng.choice(ORGS), "o2": rng.choice(ORGS), "t1": rng.choice(TOPICS), "t2": rng.choice(TOPICS),
             "year": str(rng.randint(1890, 2020))}
    sentences = [t.format(**slots) for t in rng.sample(TEMPLATES, k=rng.randint(3, 5))]
    sentences.append(f"This is soak note {serial}, revision {revision}.")
    return f"Soak note {serial}: {slots['p1']} in {slots['c1']}", " ".join(sentences)


# -- records ---------------------------------------------------------------------------------------

@dataclass
class Call:
    t: float  # seconds since the start of the soak, when the request was sent
    kind: str  # search, ingest, read
    op: str  # e.g. search:auto, ingest:create, read:entities
    status: int  # HTTP status, 0 for a transport error
    ms: float
    leg_problems: int = 0


@dataclass
class Soak:
    t0: float = 0.0
    calls: list[Call] = field(default_factory=list)
    error_samples: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in KINDS})
    leg_problems: Counter[str] = field(default_factory=Counter)  # "<leg>:<status>"
    leg_problem_samples: list[str] = field(default_factory=list)
    ingest_status: Counter[str] = field(default_factory=Counter)  # "<op>-><status in the body>"
    unexpected: list[str] = field(default_factory=list)
    memory: list[dict[str, Any]] = field(default_factory=list)

    def now(self) -> float:
        return time.perf_counter() - self.t0

    async def call(self, client: httpx.AsyncClient, kind: str, op: str, method: str, url: str,
                   **kwargs: Any) -> httpx.Response | None:
        """Send one request and record it; the response when it was 2xx, else None (an error)."""
        t = self.now()
        start = time.perf_counter()
        try:
            resp = await client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            self.calls.append(Call(t, kind, op, 0, (time.perf_counter() - start) * 1000))
            self._error(kind, f"{op} at {t:.1f}s: {type(exc).__name__}: {exc}")
            return None
        ms = (time.perf_counter() - start) * 1000
        call = Call(t, kind, op, resp.status_code, ms)
        self.calls.append(call)
        if not 200 <= resp.status_code < 300:
            self._error(kind, f"{op} at {t:.1f}s: HTTP {resp.status_code}: {resp.text[:300]}")
            return None
        if kind == "search":
            try:
                legs = resp.json().get("legs", {})
            except ValueError:
                legs = {}
            for leg, info in legs.items():
                status = info.get("status")
                if status not in ("ok", "skipped"):
                    call.leg_problems += 1
                    self.leg_problems[f"{leg}:{status}"] += 1
                    if len(self.leg_problem_samples) < ERROR_SAMPLES:
                        self.leg_problem_samples.append(f"{op} at {t:.1f}s: {leg} {status}: {info.get('error', '')}")
        return resp

    def _error(self, kind: str, message: str) -> None:
        if len(self.error_samples[kind]) < ERROR_SAMPLES:
            self.error_samples[kind].append(message)


def summarise(calls: list[Call], seconds: float) -> dict[str, Any]:
    ok = [c.ms for c in calls if 200 <= c.status < 300]
    statuses = Counter(str(c.status) for c in calls)
    return {"requests": len(calls), "errors": len(calls) - len(ok), "statuses": dict(sorted(statuses.items())),
            "per_s": round(len(calls) / seconds, 2) if seconds > 0 else None,
            "leg_problems": sum(c.leg_problems for c in calls), "latency_ms": percentiles(ok)}


def window_stats(soak: Soak, index: int, width: float, end: float) -> dict[str, Any]:
    lo, hi = index * width, min((index + 1) * width, end)
    inside = [c for c in soak.calls if lo <= c.t < hi]
    out: dict[str, Any] = {"window": index, "from_s": round(lo, 1), "to_s": round(hi, 1)}
    for kind in KINDS:
        entry = summarise([c for c in inside if c.kind == kind], hi - lo)
        entry.pop("statuses")
        out[kind] = entry
    return out


# -- processes -------------------------------------------------------------------------------------

def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().splitlines()[0].strip())
    except (OSError, ValueError, IndexError):
        return None


def tree_memory(pid: int | None) -> dict[str, Any]:
    """RSS (and PSS where readable) of a process and its descendants, in MB."""
    if pid is None:
        return {"error": "no pid"}
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error as exc:
        return {"pid": pid, "error": f"{type(exc).__name__}: {exc}"}
    rss = pss = 0
    pss_ok = True
    alive = 0
    for proc in procs:
        try:
            rss += proc.memory_info().rss
            alive += 1
        except psutil.Error:
            continue
        if pss_ok:
            try:
                pss += getattr(proc.memory_full_info(), "pss", 0)
            except psutil.Error:
                pss_ok = False
    out: dict[str, Any] = {"pid": pid, "processes": alive, "rss_mb": round(rss / 2**20, 1)}
    if pss_ok:
        out["pss_mb"] = round(pss / 2**20, 1)
    return out


def memory_sample(api_pid: int, home: Path, t: float) -> dict[str, Any]:
    return {"t": round(t, 1),
            "api": tree_memory(api_pid),
            "postgres": tree_memory(read_pid(home / "postgres" / "data" / "postmaster.pid")),
            "neo4j": tree_memory(read_pid(home / "neo4j" / "run" / "neo4j.pid"))}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``graphrag serve`` in a child process against ``home``."""

    def __init__(self, home: Path, port: int, log_path: Path) -> None:
        self.home = home
        self.port = port
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    async def start(self, timeout: float = 300) -> float:
        """Start the server and wait for /ready; the seconds it took."""
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRAPHRAG_HOME": str(self.home)}
        graphrag = Path(sys.executable).parent / "graphrag"
        command = [str(graphrag)] if graphrag.exists() else [sys.executable, "-c",
                                                             "from graphrag.cli import main; main()"]
        log = self.log_path.open("wb")
        started = time.perf_counter()
        self.proc = subprocess.Popen([*command, "serve", "--host", "127.0.0.1", "--port", str(self.port)],
                                     cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        async with httpx.AsyncClient() as client:
            while time.perf_counter() - started < timeout:
                if self.proc.poll() is not None:
                    raise SystemExit(f"API server exited ({self.proc.returncode}); see {self.log_path}")
                try:
                    if (await client.get(f"{self.url}/ready", timeout=5)).status_code == 200:
                        return time.perf_counter() - started
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(1)
        self.stop()
        raise SystemExit(f"API server not ready in {timeout:.0f} s; see {self.log_path}")

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        return self.proc.returncode

    def log_problems(self) -> dict[str, Any]:
        """Lines of the server log that look like errors (tracebacks, ERROR/CRITICAL records)."""
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return {}
        bad = [ln for ln in lines if ln.startswith(("ERROR", "CRITICAL")) or " ERROR " in ln]
        exceptions = Counter(ln[:300] for ln in lines if EXCEPTION_LINE.match(ln))
        return {"lines": len(lines), "error_lines": len(bad), "tracebacks": sum("Traceback" in ln for ln in lines),
                "first_error_lines": [ln[:300] for ln in bad[:5]],
                "exceptions": dict(exceptions.most_common(10)),
                "clean_shutdown": any("Finished server process" in ln for ln in lines[-20:])}


# -- clients ---------------------------------------------------------------------------------------

async def searcher(soak: Soak, client: httpx.AsyncClient, index: int, claims: list[tuple[str, str]],
                   duration: float) -> None:
    """Back-to-back searches; client ``index`` starts at its own place in the claims and modes."""
    step = itertools.count(index * 7919)
    while soak.now() < duration:
        n = next(step)
        _, text = claims[n % len(claims)]
        mode = MODES[n % len(MODES)]
        await soak.call(client, "search", f"search:{mode}", "POST", "/search",
                        json={"query": text, "mode": mode, "limit": 10, "collections": [SEARCH_COLLECTION]})


async def ingester(soak: Soak, client: httpx.AsyncClient, duration: float, every: float, run_id: str,
                   seed: int) -> None:
    """Creates, updates, re-posts unchanged and deletes documents of the soak collection."""
    rng = random.Random(seed)
    live: dict[str, dict[str, Any]] = {}  # source -> {"id", "title", "text", "revision", "serial"}
    serial = 0
    while soak.now() < duration:
        started = time.perf_counter()
        roll = rng.random()
        if live and roll < 0.15:
            source = rng.choice(sorted(live))
            doc = live.pop(source)
            resp = await soak.call(client, "ingest", "ingest:delete", "DELETE", f"/documents/{doc['id']}")
            if resp is not None and resp.json().get("deleted") is not True:
                soak.unexpected.append(f"delete {doc['id']}: {resp.text[:200]}")
        else:
            if live and roll < 0.40:
                op, source = "update", rng.choice(sorted(live))
                doc = live[source]
                doc["revision"] += 1
                doc["title"], doc["text"] = make_text(rng, doc["serial"], doc["revision"])
            elif live and roll < 0.45:
                op, source = "unchanged", rng.choice(sorted(live))
                doc = live[source]
            else:
                serial += 1
                op, source = "create", f"soak://{run_id}/{serial}"
                title, text = make_text(rng, serial, 0)
                doc = {"id": None, "title": title, "text": text, "revision": 0, "serial": serial}
            body = {"text": doc["text"], "title": doc["title"], "source": source, "collection": SOAK_COLLECTION,
                    "metadata": {"soak_run": run_id, "serial": doc["serial"], "revision": doc["revision"]},
                    "tags": ["soak"]}
            resp = await soak.call(client, "ingest", f"ingest:{op}", "POST", "/documents", json=body)
            if resp is not None:
                data = resp.json()
                expected = {"create": "created", "update": "updated", "unchanged": "unchanged"}[op]
                soak.ingest_status[f"{op}->{data.get('status')}"] += 1
                if data.get("status") != expected and len(soak.unexpected) < 20:
                    soak.unexpected.append(f"{op} {source}: expected {expected}, got {data.get('status')}")
                doc["id"] = data.get("id", doc["id"])
                live[source] = doc
        await asyncio.sleep(max(0.0, every - (time.perf_counter() - started)))


async def reader(soak: Soak, client: httpx.AsyncClient, duration: float, every: float, seed: int,
                 scifact_docs: int) -> None:
    """Document pages, document details and entity look-ups, in turn."""
    rng = random.Random(seed)
    seen_ids: list[str] = []
    for n in itertools.count():
        if soak.now() >= duration:
            break
        started = time.perf_counter()
        which = n % 4
        if which == 0:
            offset = rng.randrange(max(1, scifact_docs - 20))
            resp = await soak.call(client, "read", "read:documents", "GET", "/documents",
                                   params={"collection": SEARCH_COLLECTION, "limit": 20, "offset": offset})
            if resp is not None:
                seen_ids = [d["id"] for d in resp.json().get("documents", [])] or seen_ids
        elif which == 1:
            await soak.call(client, "read", "read:documents", "GET", "/documents",
                            params={"collection": SOAK_COLLECTION, "limit": 20})
        elif which == 2 and seen_ids:
            await soak.call(client, "read", "read:document", "GET", f"/documents/{rng.choice(seen_ids)}")
        else:
            name = rng.choice(LAST) if rng.random() < 0.5 else rng.choice(CITIES)
            await soak.call(client, "read", "read:entities", "GET", "/entities",
                            params={"q": name, "limit": 10})
        await asyncio.sleep(max(0.0, every - (time.perf_counter() - started)))


async def sampler(soak: Soak, api_pid: int, home: Path, duration: float, width: float) -> None:
    """At every window boundary: a memory sample and a progress line for the window that ended."""
    for index in itertools.count():
        boundary = (index + 1) * width
        if boundary > duration:
            return
        await asyncio.sleep(max(0.0, boundary - soak.now()))
        sample = await asyncio.to_thread(memory_sample, api_pid, home, soak.now())
        soak.memory.append(sample)
        stats = window_stats(soak, index, width, duration)
        parts = [f"{k} {stats[k]['requests']} err {stats[k]['errors']} p50 {stats[k]['latency_ms'].get('p50')} "
                 f"p95 {stats[k]['latency_ms'].get('p95')}" for k in KINDS]
        print(f"[{boundary:5.0f}s] " + " | ".join(parts) + f" | legs {stats['search']['leg_problems']} | RSS api "
              f"{sample['api'].get('rss_mb')} pg {sample['postgres'].get('rss_mb')} neo4j "
              f"{sample['neo4j'].get('rss_mb')} MB", flush=True)


# -- end of run ------------------------------------------------------------------------------------

async def cleanup(client: httpx.AsyncClient) -> dict[str, Any]:
    """Delete every document of the soak collection through REST."""
    deleted, errors, samples = 0, 0, []
    for _ in range(1000):
        resp = await client.get("/documents", params={"collection": SOAK_COLLECTION, "limit": 200})
        if resp.status_code != 200:
            errors += 1
            samples.append(f"list: HTTP {resp.status_code}: {resp.text[:200]}")
            break
        docs = resp.json()["documents"]
        if not docs:
            break
        before = deleted
        for doc in docs:
            r = await client.delete(f"/documents/{doc['id']}")
            if r.status_code == 200:
                deleted += 1
            else:
                errors += 1
                if len(samples) < ERROR_SAMPLES:
                    samples.append(f"delete {doc['id']}: HTTP {r.status_code}: {r.text[:200]}")
        if deleted == before:  # nothing could be deleted: do not loop on the same page
            break
    left = (await client.get("/documents", params={"collection": SOAK_COLLECTION, "limit": 1})).json().get("total")
    return {"deleted": deleted, "errors": errors, "error_samples": samples, "documents_left": left}


def soak_view(stats: dict[str, Any]) -> dict[str, Any]:
    return {"counts": stats.get("collections", {}).get(SOAK_COLLECTION),
            "drift": [d for d in stats.get("drift", []) if d.get("collection") == SOAK_COLLECTION],
            "graph_outbox": stats.get("graph_outbox")}


async def drift_check(client: httpx.AsyncClient, wait: float = 30) -> dict[str, Any]:
    """``GET /stats`` for the soak collection; waits while the drift is graph writes still pending."""
    first: dict[str, Any] | None = None
    started = time.perf_counter()
    while True:
        resp = await client.get("/stats")
        if resp.status_code != 200:
            return {"error": f"HTTP {resp.status_code}: {resp.text[:300]}"}
        stats = resp.json()
        view = soak_view(stats)
        first = first or view
        pending = sum(d.get("awaiting_graph_writes", 0) for d in view["drift"])
        if not view["drift"] or not pending or time.perf_counter() - started > wait:
            break
        await asyncio.sleep(2)
    counts = view["counts"] or {}
    return {"first": first, "final": view, "waited_s": round(time.perf_counter() - started, 1),
            "drift": bool(view["drift"]), "leftover": any(v for v in counts.values()),
            "other_collections_drift": [d["collection"] for d in stats.get("drift", [])
                                        if d.get("collection") != SOAK_COLLECTION],
            "collections": stats.get("collections")}


# -- main ------------------------------------------------------------------------------------------

async def run(args: argparse.Namespace) -> dict[str, Any]:
    home = Path(args.home).expanduser().resolve()
    out_path = Path(args.out) if args.out else RESULTS / "soak.json"
    claims = read_queries()
    run_id = uuid.uuid4().hex[:8]
    log_path = Path(f"/tmp/bench_soak_{run_id}.log")
    server = Server(home, args.port or free_port(), log_path)
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    info = await machine()
    print(f"soak {run_id}: {args.duration:.0f} s, {args.searchers} searchers, {len(claims)} claims, "
          f"home {home}, server log {log_path}", flush=True)
    startup_s = await server.start()
    print(f"API ready on {server.url} in {startup_s:.1f} s (pid {server.pid})", flush=True)
    soak = Soak()
    result: dict[str, Any] = {}
    connections = args.searchers + 4
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    try:
        async with httpx.AsyncClient(base_url=server.url, limits=limits, timeout=args.request_timeout) as client:
            stats0 = (await client.get("/stats")).json()
            scifact_docs = stats0["collections"].get(SEARCH_COLLECTION, {}).get("documents", 0)
            if not scifact_docs:
                raise SystemExit(f"no collection {SEARCH_COLLECTION!r} under {home}")
            for i, mode in enumerate(MODES):  # warm-up, not recorded
                await client.post("/search", json={"query": claims[-1 - i][1], "mode": mode, "limit": 10,
                                                   "collections": [SEARCH_COLLECTION]})
            memory_start = await asyncio.to_thread(memory_sample, server.pid, home, 0.0)
            print(f"RSS at start: api {memory_start['api'].get('rss_mb')} MB, postgres "
                  f"{memory_start['postgres'].get('rss_mb')} MB (PSS {memory_start['postgres'].get('pss_mb')}), "
                  f"neo4j {memory_start['neo4j'].get('rss_mb')} MB", flush=True)
            soak.t0 = time.perf_counter()
            workers = [searcher(soak, client, i, claims, args.duration) for i in range(args.searchers)]
            workers.append(ingester(soak, client, args.duration, args.ingest_every, run_id, args.seed))
            if args.read_every > 0:
                workers.append(reader(soak, client, args.duration, args.read_every, args.seed + 1, scifact_docs))
            sampling = asyncio.create_task(sampler(soak, server.pid, home, args.duration, args.window))
            await asyncio.gather(*workers)
            wall = soak.now()
            sampling.cancel()
            memory_end = await asyncio.to_thread(memory_sample, server.pid, home, wall)
            print(f"load done after {wall:.1f} s; cleaning up {SOAK_COLLECTION!r}", flush=True)
            cleaned = await cleanup(client)
            drift = await drift_check(client)
            scifact_after = (drift.get("collections") or {}).get(SEARCH_COLLECTION)
    finally:
        returncode = server.stop()

    end = args.duration  # no request starts later
    n_windows = max(1, int(-(-end // args.window)))
    windows = [window_stats(soak, i, args.window, end) for i in range(n_windows)]
    for window in windows:
        sample = next((m for m in soak.memory if abs(m["t"] - window["to_s"]) < args.window / 2), None)
        if sample is None and window is windows[-1]:
            sample = memory_end
        window["rss_mb"] = ({k: sample[k].get("rss_mb") for k in ("api", "postgres", "neo4j")}
                            if sample else None)
    totals = {kind: summarise([c for c in soak.calls if c.kind == kind], wall) for kind in KINDS}
    ops = {op: summarise([c for c in soak.calls if c.op == op], wall)
           for op in sorted({c.op for c in soak.calls})}

    def growth(key: str) -> float | None:
        a, b = memory_start[key].get("rss_mb"), memory_end[key].get("rss_mb")
        return round(b - a, 1) if a is not None and b is not None else None

    result = {
        "run_id": run_id, "started_at": started_at,
        "config": {"duration_s": args.duration, "searchers": args.searchers, "modes": list(MODES),
                   "search_collection": SEARCH_COLLECTION, "soak_collection": SOAK_COLLECTION,
                   "ingest_every_s": args.ingest_every, "read_every_s": args.read_every, "window_s": args.window,
                   "request_timeout_s": args.request_timeout, "seed": args.seed, "claims": len(claims),
                   "home": str(home), "server": f"graphrag serve --host 127.0.0.1 --port {server.port}",
                   "server_log": str(log_path)},
        "machine": info,
        "api_startup_s": round(startup_s, 1),
        "wall_s": round(wall, 1),
        "errors": {kind: totals[kind]["errors"] for kind in KINDS} | {"total": sum(t["errors"] for t in totals.values())},
        "error_samples": {k: v for k, v in soak.error_samples.items() if v},
        "leg_problems": {"total": sum(soak.leg_problems.values()), "by_leg_status": dict(soak.leg_problems),
                         "samples": soak.leg_problem_samples},
        "totals": totals,
        "operations": ops,
        "ingest_outcomes": dict(soak.ingest_status),
        "ingest_unexpected": soak.unexpected,
        "windows": windows,
        "memory": {"start": memory_start, "end": memory_end,
                   "rss_growth_mb": {k: growth(k) for k in ("api", "postgres", "neo4j")},
                   "samples": soak.memory,
                   "note": "rss_mb sums the process and its children (PostgreSQL backends share shared_buffers, "
                           "so their RSS sum overcounts; pss_mb does not)"},
        "cleanup": cleaned,
        "soak_stats_after_cleanup": {k: v for k, v in drift.items() if k != "collections"},
        "scifact_counts_before": stats0["collections"].get(SEARCH_COLLECTION),
        "scifact_counts_after": scifact_after,
        # Only read here: a change means another process wrote to it during the run (and loaded the machine).
        "scifact_changed_during_run": stats0["collections"].get(SEARCH_COLLECTION) != scifact_after,
        "soak_counts_before": stats0["collections"].get(SOAK_COLLECTION),
        "server_exit_code": returncode,  # -15: uvicorn re-raises the SIGTERM after its graceful shutdown
        "server_log": server.log_problems(),
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print_summary(result)
    print(f"wrote {out_path}")
    return result


def print_summary(r: dict[str, Any]) -> None:
    print(f"\n== soak {r['run_id']}: {r['wall_s']} s, {r['config']['searchers']} searchers ==")
    for kind, t in r["totals"].items():
        lat = t["latency_ms"]
        print(f"{kind:7} {t['requests']:6} requests ({t.get('per_s', 0)}/s), errors {t['errors']}, "
              f"p50 {lat.get('p50')} p95 {lat.get('p95')} p99 {lat.get('p99')} max {lat.get('max')} ms")
    print(f"leg problems in 200 searches: {r['leg_problems']['total']} {r['leg_problems']['by_leg_status'] or ''}")
    print(f"ingest outcomes: {r['ingest_outcomes']}" + (f"; unexpected: {len(r['ingest_unexpected'])}"
                                                       if r["ingest_unexpected"] else ""))
    print("windows (search p95 ms): " + ", ".join(f"{w['from_s']:.0f}-{w['to_s']:.0f}s {w['search']['latency_ms'].get('p95')}"
                                                   for w in r["windows"]))
    m = r["memory"]
    for key in ("api", "postgres", "neo4j"):
        extra = (f" (PSS {m['start'][key].get('pss_mb')} -> {m['end'][key].get('pss_mb')})"
                 if "pss_mb" in m["start"][key] and key == "postgres" else "")
        print(f"RSS {key:8} {m['start'][key].get('rss_mb')} -> {m['end'][key].get('rss_mb')} MB "
              f"({m['rss_growth_mb'][key]:+} MB){extra}" if m["rss_growth_mb"][key] is not None
              else f"RSS {key:8} {m['start'][key]} -> {m['end'][key]}")
    c, s = r["cleanup"], r["soak_stats_after_cleanup"]
    print(f"cleanup: {c['deleted']} deleted, {c['errors']} errors, {c['documents_left']} left; "
          f"soak drift after cleanup: {s.get('drift')} (waited {s.get('waited_s')} s), counts {s.get('final', {}).get('counts')}")
    if r["error_samples"]:
        print("first errors:", json.dumps(r["error_samples"], indent=1)[:1500])
    if r["scifact_changed_during_run"]:
        print(f"note: {SEARCH_COLLECTION} changed during the run (another writer): {r['scifact_counts_before']} -> "
              f"{r['scifact_counts_after']}")
    log = r["server_log"]
    print(f"server log: {log.get('error_lines')} error lines, {log.get('tracebacks')} tracebacks"
          + (f" {log.get('exceptions')}" if log.get("exceptions") else "")
          + f"; clean shutdown {log.get('clean_shutdown')} (exit code {r['server_exit_code']})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=600, help="seconds of load (default 600)")
    parser.add_argument("--searchers", type=int, default=4, help="concurrent search clients (default 4)")
    parser.add_argument("--home", default=".graphrag", help="GRAPHRAG_HOME of the running services")
    parser.add_argument("--out", default="", help="result file (default bench/results/soak.json)")
    parser.add_argument("--window", type=float, default=60, help="seconds per reporting window (default 60)")
    parser.add_argument("--ingest-every", type=float, default=2.0, help="seconds between ingest requests")
    parser.add_argument("--read-every", type=float, default=1.0, help="seconds between read requests (0: none)")
    parser.add_argument("--request-timeout", type=float, default=120.0, help="client timeout per request, seconds")
    parser.add_argument("--port", type=int, default=0, help="API port (default: a free one)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
