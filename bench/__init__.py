"""Benchmarks: retrieval quality on public sets, recall latency, write latency.

Each runs the real code path (the engine's one writer, recall, the GGUF
embedder, an encrypted temporary store) and prints what it measured:

    python -m bench.retrieval locomo PATH [--json OUT]
    python -m bench.retrieval longmemeval PATH [--json OUT]
    python -m bench.recall_speed
    python -m bench.write
"""
