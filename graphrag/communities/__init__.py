"""Communities of a collection's entity graph and the global search over their reports.

- :mod:`.detect`: hierarchical Leiden (level 0 coarse, level 1 finer), seeded, pure functions.
- :mod:`.reports`: a report per community, extractive by default, written by an LLM when one is given.
- :mod:`.build`: computes a collection's communities and stores them in Neo4j (``Community`` nodes).
- :mod:`.search`: the ``global`` search mode and the corpus-level question classifier of ``auto``.
- :mod:`.answer`: ``global_answer(model, query, reports)``, the map-reduce answer over reports.
"""
