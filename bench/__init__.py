"""Benchmarks, each runnable as ``python -m bench.<name>``.

Retrieval quality on the public sets, recall latency and the writer's append
latency run the real code path (the engine's one writer, recall, the GGUF
embedder, an encrypted temporary store) and print what they measured:

    python -m bench.retrieval locomo PATH [--json OUT]
    python -m bench.retrieval longmemeval PATH [--json OUT]
    python -m bench.recall_speed
    python -m bench.write
"""
