"""Texts whose vectors were recorded before llama.cpp's buffers were resized for
embedding (``buffer_vectors_*.npy``): short and long, several scripts, one right at the
token cap and one far past it, so a change of n_batch, n_ubatch, n_ctx or n_seq_max that
altered a vector shows up."""

from __future__ import annotations

LONG_EN = " ".join(
    f"Step {i}: the release train leaves on Thursday after the smoke tests pass."
    for i in range(1, 40)
)

BUFFER_TEXTS: tuple[str, ...] = (
    "hello",
    "Deploy from main, never from the release branch.",
    "Wann ist die Miete fällig? Am ersten Tag des Monats.",
    "会议改到周四下午三点，请提前准备季度报告。",  # noqa: RUF001 (a Chinese comma)
    "Реліз відбувається щочетверга після димових тестів.",
    "The billing service needs two approvals before anything merges; the staging "
    "server moved to the new Kubernetes cluster in March and runs nightly backups.",
    LONG_EN[:900],  # near the 256-token cap
    LONG_EN,  # far past it: truncated
    "",
)
"""Embedded one by one and all at once, as passages; the first three as queries too."""
