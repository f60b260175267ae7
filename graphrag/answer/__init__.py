"""Grounded answers with citations: retrieval through the search router, an answer from the numbered
hits by the configured pydantic-ai model (``GRAPHRAG_ANSWER_MODEL``), and a lexical check that each
sentence is supported by the hit it cites.

- :mod:`graphrag.answer.citations`: the citation check (pure functions);
- :mod:`graphrag.answer.model`: the model setting, the prompt and the built-in ``test`` model;
- :mod:`graphrag.answer.service`: retrieve, answer (whole or streamed), check;
- :mod:`graphrag.answer.cli`: ``graphrag ask``.

Nothing is imported here, so the CLI can load the command without the models.
"""
