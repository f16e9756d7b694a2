"""Retrieval structures that know nothing of `Index` or the method registry.

`lexical` (BM25 / TF-IDF over stored term frequencies), `dense` (record vectors and their model),
`ann` (HNSW over those vectors), `ranking` (top-k with ties by id), `fusion` (RRF over rankings),
`kernels` (optional numba kernels). Each structure saves and loads itself where it is stored.
"""
