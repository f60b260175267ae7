"""Retrieval: legs (vector, keyword, graph), fusion, and the router that runs them concurrently."""
