"""The secret scan per shape, on the corpus in ``tests/mama_core/secrets_corpus/``.

    python -m bench.secret_scan [--before PATH_TO_OLD_secrets_scan.py]

Prints one row per positive shape (the kind the scan names, or MISSED), every
ordinary note it refuses (false positives), the totals, and the time per text.
With ``--before`` the same corpus is also run through another version of the
scanner module (e.g. main's ``mama_core/memory/secrets_scan.py``) and its
column is printed beside. Ends with the line
``refused X/Y positives; false positives A/B (1 in N); Z us per text``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from mama_core.memory.secrets_scan import find_secret

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "mama_core" / "secrets_corpus"

Scanner = Callable[[str], str | None]


def _load(path: Path) -> Scanner:
    spec = importlib.util.spec_from_file_location("secrets_scan_before", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.find_secret


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", type=Path, help="another secrets_scan.py to compare")
    args = parser.parse_args(argv)
    before = _load(args.before) if args.before else None

    with (CORPUS / "positives.jsonl").open(encoding="utf-8") as fh:
        positives = [json.loads(line) for line in fh if line.strip()]
    lines = (CORPUS / "negatives.txt").read_text(encoding="utf-8").splitlines()
    negatives = [
        line.replace("\\n", "\n") for line in lines if line.strip() and not line.startswith("#")
    ]

    width = max(len(row["shape"]) for row in positives)
    header = f"{'shape':<{width}}  {'now':<44}" + ("  before" if before else "")
    print(header)
    print("-" * len(header))
    refused = refused_before = 0
    for row in positives:
        kind = find_secret(row["text"])
        refused += kind is not None
        cells = f"{row['shape']:<{width}}  {kind or 'MISSED':<44}"
        if before is not None:
            old = before(row["text"])
            refused_before += old is not None
            cells += f"  {old or 'MISSED'}"
        print(cells)

    print("\nordinary notes refused:")
    false_positives = 0
    for text in negatives:
        kind = find_secret(text)
        if kind is not None:
            false_positives += 1
            print(f"  {kind}: {text[:70]}")
    if not false_positives:
        print("  none")
    if before is not None:
        old_fp = sum(before(text) is not None for text in negatives)
        print(
            f"\nbefore: refused {refused_before}/{len(positives)} positives; "
            f"false positives {old_fp}/{len(negatives)}"
        )

    texts = [row["text"] for row in positives] + negatives
    start = time.perf_counter()
    rounds = 5
    for _ in range(rounds):
        for text in texts:
            find_secret(text)
    per_text_us = (time.perf_counter() - start) / (rounds * len(texts)) * 1e6
    ratio = f"1 in {len(negatives) // false_positives}" if false_positives else "none"
    print(
        f"\nrefused {refused}/{len(positives)} positives; false positives "
        f"{false_positives}/{len(negatives)} ({ratio}); {per_text_us:.0f} us per text"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
