"""The REST API as ``graphrag serve`` runs it (same ``serve()``), for the search benchmark.

``--no-query-cache`` turns the router's query-embedding cache off, so every request pays for its
embedding, as a stream of distinct user queries would.

    python bench/serve.py --port 8765 --no-query-cache [--no-embed-batching] [--workers 2]

One API process unless ``--workers`` says more (each worker then applies the same switches).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from graphrag.api.server import serve  # noqa: E402
from graphrag.config import Settings  # noqa: E402
from graphrag.search.router import SearchRouter  # noqa: E402

_SWITCHES = "GRAPHRAG_BENCH_SWITCHES"  # how the switches reach worker processes


def _apply(switches: str) -> None:
    if "no-query-cache" in switches.split(","):
        SearchRouter.query_cache_size = 0
    if "no-embed-batching" in switches.split(","):
        SearchRouter.embed_batching = False


def app_factory() -> object:
    """The app of one worker process, with the benchmark's switches."""
    from graphrag.api.app import create_app

    _apply(os.environ.get(_SWITCHES, ""))
    return create_app(Settings())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--no-query-cache", action="store_true")
    parser.add_argument("--no-embed-batching", action="store_true", help="one model call per embedding request")
    parser.add_argument("--workers", type=int, default=1, help="API processes on the port")
    args = parser.parse_args()
    switches = ",".join(name for name, on in (("no-query-cache", args.no_query_cache),
                                              ("no-embed-batching", args.no_embed_batching)) if on)
    os.environ[_SWITCHES] = switches
    _apply(switches)
    serve(Settings(), host=args.host, port=args.port, workers=args.workers, factory="bench.serve:app_factory")


if __name__ == "__main__":
    main()
