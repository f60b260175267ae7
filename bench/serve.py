"""The REST API as ``graphrag serve`` runs it (same ``serve()``), for the search benchmark.

``--no-query-cache`` turns the router's query-embedding cache off, so every request pays for its
embedding, as a stream of distinct user queries would.

    python bench/serve.py --port 8765 --no-query-cache [--no-embed-batching]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--no-query-cache", action="store_true")
    parser.add_argument("--no-embed-batching", action="store_true", help="one model call per embedding request")
    args = parser.parse_args()
    if args.no_query_cache:
        SearchRouter.query_cache_size = 0
    if args.no_embed_batching:
        SearchRouter.embed_batching = False
    serve(Settings(), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
