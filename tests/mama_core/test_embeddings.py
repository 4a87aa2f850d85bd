"""The embedding engine against the real all-MiniLM-L6-v2 weights.

The correctness reference is a plain numpy BERT forward pass over the same
safetensors weights, tokenised by Hugging Face's WordPiece tokenizer from the same
vocab.txt, so a wrong tensor name, dtype, vocabulary mapping or pooling in our
converter or embedder shows up as a token or cosine mismatch.
"""

from __future__ import annotations

import hashlib
import math
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import gguf
import numpy as np
import pytest
from safetensors.numpy import load_file
from tokenizers import BertWordPieceTokenizer

from mama_core.embeddings import (
    Embedder,
    GgufEmbedder,
    ModelError,
    default_model_source,
    ensure_default_model,
    load_embedder,
)
from mama_core.embeddings.base import l2_normalise
from mama_core.embeddings.convert import (
    CONVERTER_VERSION,
    MINILM,
    convert_bert_to_gguf,
    source_hash,
)

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model

LONG_TEXT = " ".join(
    f"Sentence {i}: the owner asked MAMA to remember the meeting notes, "
    "the budget figures and who promised what by Friday."
    for i in range(30)
)

# Inputs for the reference comparison: each kind the brief names, plus a few more.
REFERENCE_INPUTS = [
    "Hello world",
    "The cat sits on the mat",
    "MAMA remembers what you told it last Tuesday about the budget.",
    LONG_TEXT,  # far more than 256 word pieces: truncated on both sides
    "Café, naïve façade in Zürich — résumé",
    "ÀÉÎÕÜ ÇÑ ßẞ and a\u0301 e\u0300 n\u0303 (combining accents)",
    "안녕하세요, 만나서 반갑습니다",  # Hangul: needs a true NFD, see bert_normalise
    "東京は日本の首都です。ひらがなとカタカナ、がぎぐ",
    "我喜欢学习中文和编程",
    "Привет, как дела? Ёлка",
    "مرحبا بالعالم، كيف حالك؟",
    "Hindi: नमस्ते दुनिया",  # spacing vowel signs (Mc) are kept by BERT
    "Greek: Ελληνικά και ΣΙΣΥΦΟΣ",
    "def f(x): return x**2",
    "I love it 😀🎉👍🏽 family: 👨\u200d👩\u200d👧",
    "!!! ??? ... --- (a) [b] {c} <d> @#$%^&* ¿Qué? «guillemets»",
    "3.14159 1,000,000 2024-05-01 42 €100 £50",
    "URL: https://example.com/path?q=1&x=2 email a.b@c.org",
    "\t\n  spaced   out\ttext \n",
    # fullwidth "Full ABC 123", zero-width spaces
    "\uff26\uff55\uff4c\uff4c \uff21\uff22\uff23 \uff11\uff12\uff13 and \u200bzero\u200bwidth",
    " ",
    "",
]


# --- the numpy reference ----------------------------------------------------------


class ReferenceBert:
    """all-MiniLM-L6-v2 as sentence-transformers runs it, in float64 numpy."""

    def __init__(self, src_dir: Path) -> None:
        self.w = {
            k: v.astype(np.float64)
            for k, v in load_file(src_dir / "model.safetensors").items()
            if v.dtype != np.int64
        }
        self.n_layers = 6
        self.n_heads = 12
        self.eps = 1e-12
        # lowercase=True with strip_accents unset: BERT's uncased normaliser, which
        # strips accents because it lowercases.
        self.tokenizer = BertWordPieceTokenizer(str(src_dir / "vocab.txt"), lowercase=True)
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._erf = np.frompyfunc(math.erf, 1, 1)

    def token_ids(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text).ids)

    def embed(self, text: str) -> np.ndarray:
        ids = np.array(self.token_ids(text))
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: len(ids)]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        for layer in range(self.n_layers):
            p = f"encoder.layer.{layer}."
            attended = self._attention(x, p + "attention.self.")
            x = self._norm(
                x + self._linear(attended, p + "attention.output.dense"),
                p + "attention.output.LayerNorm",
            )
            hidden = self._gelu(self._linear(x, p + "intermediate.dense"))
            x = self._norm(x + self._linear(hidden, p + "output.dense"), p + "output.LayerNorm")
        pooled = x.mean(axis=0)  # one text, no padding: every token is in the mask
        return (pooled / np.linalg.norm(pooled)).astype(np.float32)

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[
            name + ".bias"
        ]

    def _attention(self, x: np.ndarray, prefix: str) -> np.ndarray:
        n, d = x.shape
        head = d // self.n_heads

        def split(name: str) -> np.ndarray:
            return self._linear(x, prefix + name).reshape(n, self.n_heads, head).transpose(1, 0, 2)

        q, k, v = split("query"), split("key"), split("value")
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(head)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probs = scores / scores.sum(axis=-1, keepdims=True)
        return (probs @ v).transpose(1, 0, 2).reshape(n, d)

    def _gelu(self, x: np.ndarray) -> np.ndarray:
        return 0.5 * x * (1.0 + np.asarray(self._erf(x / math.sqrt(2.0)), dtype=np.float64))


# --- fixtures -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_default_model(tmp_path_factory.mktemp("model-cache"), name=MINILM)


@pytest.fixture(scope="module")
def embedder(model_path: Path) -> Iterator[GgufEmbedder]:
    built = load_embedder(None, model_path.parent, builtin=MINILM)
    assert built.model_path == model_path  # reused, not rebuilt
    yield built
    built.close()


@pytest.fixture(scope="module")
def reference() -> ReferenceBert:
    return ReferenceBert(default_model_source())


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# --- correctness against the reference ------------------------------------------------


@pytest.mark.parametrize("text", REFERENCE_INPUTS, ids=lambda t: repr(t[:24]))
def test_token_ids_match_reference_tokenizer(
    embedder: GgufEmbedder, reference: ReferenceBert, text: str
) -> None:
    assert embedder.token_ids(text) == reference.token_ids(text)


def test_long_text_is_truncated_like_sentence_transformers(
    embedder: GgufEmbedder, reference: ReferenceBert
) -> None:
    assert len(reference.tokenizer.encode(LONG_TEXT).overflowing) > 0  # really too long
    ids = embedder.token_ids(LONG_TEXT)
    assert len(ids) == MAX_TOKENS
    assert ids[0] == 101 and ids[-1] == 102  # [CLS] … [SEP] survive the cut


@pytest.fixture(scope="module")
def f16_embedder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GgufEmbedder]:
    """The same weights converted as F16: the converter's exactness is checked on it."""
    out = tmp_path_factory.mktemp("f16") / "minilm.f16.gguf"
    convert_bert_to_gguf(default_model_source(), out, name="all-MiniLM-L6-v2", matrix_type="f16")
    built = GgufEmbedder(out, model_id="minilm-f16")
    yield built
    built.close()


def reference_cosines(embedder: GgufEmbedder, reference: ReferenceBert) -> dict[str, float]:
    assert len(REFERENCE_INPUTS) >= 20
    ours = embedder.embed(REFERENCE_INPUTS)
    # Positive control: the check can fail — a different text is far from the reference.
    assert cosine(ours[0], reference.embed("Quarterly tax filing deadline")) < 0.9
    return {text: cosine(ours[i], reference.embed(text)) for i, text in enumerate(REFERENCE_INPUTS)}


def test_f16_conversion_matches_numpy_reference(
    f16_embedder: GgufEmbedder, reference: ReferenceBert
) -> None:
    """The converter itself: with F16 matrices llama.cpp gives the reference's vectors."""
    cosines = reference_cosines(f16_embedder, reference)
    worst = min(cosines, key=lambda t: cosines[t])
    assert cosines[worst] >= 0.999, (worst[:30], cosines[worst])


def test_default_q8_0_model_stays_close_to_the_reference(
    embedder: GgufEmbedder, reference: ReferenceBert
) -> None:
    """The default file (matrices as Q8_0: ``test_converted_file_layout``) stays close to
    the reference: measured 0.9992-0.9997 on every text with content, 0.9982 on the blank
    ones ("", " "). A wrong block layout or scale gives far less (below 0.9)."""
    cosines = reference_cosines(embedder, reference)
    with_content = [cosines[t] for t in REFERENCE_INPUTS if t.strip()]
    assert min(cosines.values()) >= 0.998, min(cosines.values())
    assert float(np.mean(with_content)) >= 0.9993, float(np.mean(with_content))


# --- the Embedder contract ------------------------------------------------------------


def test_vectors_are_float32_unit_rows(embedder: GgufEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    vectors = embedder.embed(["one", "two words", "three little words", " "])
    assert vectors.dtype == np.float32
    assert vectors.shape == (4, embedder.dim) == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    one = embedder.embed_one("one")
    assert one.shape == (384,) and one.dtype == np.float32
    assert embedder.embed([]).shape == (0, 384)


def test_blank_texts_embed_to_unit_vectors(embedder: GgufEmbedder) -> None:
    vectors = embedder.embed(["", " ", "\n\t  \n"])
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_zero_row_normalises_without_nan() -> None:
    rows = l2_normalise(np.array([[0.0, 0.0, 0.0], [3.0, 0.0, 4.0]]))
    assert rows.dtype == np.float32
    assert np.isfinite(rows).all()
    np.testing.assert_allclose(rows, [[0, 0, 0], [0.6, 0, 0.8]], atol=1e-7)


@pytest.mark.parametrize(
    ("which", "atol", "min_cosine"), [("f16", 5e-4, 0.99999), ("default", 1e-2, 0.999)]
)
def test_batch_gives_the_same_vectors_as_one_by_one(
    request: pytest.FixtureRequest, which: str, atol: float, min_cosine: float
) -> None:
    """Not bit-identical: ggml picks other matmul kernels for other batch shapes. With F16
    matrices that is about 1e-4 per component; with the default's Q8_0 ones the single
    row's path also quantizes the activations to 8 bits (measured: up to 5e-3 per
    component, cosine >= 0.9994). The same vectors for ranking either way; a batch that
    mixed up rows would be far below both bounds."""
    embedder: GgufEmbedder = request.getfixturevalue(
        "f16_embedder" if which == "f16" else "embedder"
    )
    texts = [f"note {i}: {word} about the project" for i, word in enumerate("abcdefghij" * 8)]
    texts += [LONG_TEXT, LONG_TEXT[:700], "", "short"]  # forces several llama.cpp batches
    batched = embedder.embed(texts)
    singles = np.stack([embedder.embed_one(t) for t in texts])
    np.testing.assert_allclose(batched, singles, atol=atol)
    assert float((batched * singles).sum(axis=1).min()) > min_cosine
    assert not np.allclose(batched[0], batched[1], atol=1e-3)  # rows really differ


def test_similar_sentences_are_closer_than_unrelated(embedder: GgufEmbedder) -> None:
    cat, sitting, tax = embedder.embed(
        ["The cat sits on the mat", "A cat is sitting on a mat", "Quarterly tax filing deadline"]
    )
    assert cosine(cat, sitting) > cosine(cat, tax) + 0.3


def test_dim_is_read_without_loading(model_path: Path) -> None:
    fresh = GgufEmbedder(model_path)
    assert fresh.dim == 384
    assert not fresh.is_loaded
    fresh.embed_one("now it loads")
    assert fresh.is_loaded
    fresh.close()


def test_concurrent_threads_get_the_sequential_results(embedder: GgufEmbedder) -> None:
    jobs = [
        [f"thread A text {i} about apples" for i in range(40)],
        [f"thread B text {i} about invoices" for i in range(40)],
    ]
    expected = [embedder.embed(job) for job in jobs]
    results: dict[int, list[np.ndarray]] = {0: [], 1: []}
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def work(n: int) -> None:
        try:
            start.wait(timeout=10)
            for _ in range(5):
                results[n].append(embedder.embed(jobs[n]))
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert all(not thread.is_alive() for thread in threads)
    for n in (0, 1):
        assert len(results[n]) == 5
        for got in results[n]:
            np.testing.assert_allclose(got, expected[n], atol=1e-6)


# --- the converter and its cache -------------------------------------------------------


def test_converted_file_layout(model_path: Path) -> None:
    reader = gguf.GGUFReader(model_path)
    types = {t.name: t.tensor_type for t in reader.tensors}
    f32, q8 = gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.Q8_0
    assert types["position_embd.weight"] == f32
    assert types["token_types.weight"] == f32
    assert types["token_embd.weight"] == q8
    assert types["blk.0.attn_q.weight"] == q8
    assert types["blk.5.ffn_down.weight"] == q8
    assert all(
        types[t.name] == f32 for t in reader.tensors if len(t.shape) == 1
    )  # every norm and bias
    assert len(types) == 5 + 6 * 16

    def field(key: str) -> object:
        found = reader.get_field(key)
        assert found is not None, key
        return found.contents()

    assert field("general.architecture") == "bert"
    assert field("tokenizer.ggml.model") == "bert"
    assert field("bert.pooling_type") == gguf.PoolingType.MEAN
    assert field("bert.attention.causal") is False
    tokens = field("tokenizer.ggml.tokens")
    assert isinstance(tokens, list)
    assert tokens[101] == "[CLS]" and tokens[7592] == "\u2581hello"
    assert tokens[2015] == "s"  # "##s" stored without its "##"


def test_unknown_matrix_type_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="matrix_type"):
        convert_bert_to_gguf(default_model_source(), tmp_path / "x.gguf", matrix_type="q4_0")
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_default_model_is_built_once_and_reused(tmp_path: Path) -> None:
    seen: list[tuple[int, int, str]] = []
    first = ensure_default_model(tmp_path, progress=lambda *a: seen.append(a), name=MINILM)
    assert seen and seen[-1][0] == seen[-1][1]  # progress reached the end
    stamp = first.stat().st_mtime_ns, first.stat().st_ino
    again: list[tuple[int, int, str]] = []
    second = ensure_default_model(tmp_path, progress=lambda *a: again.append(a), name=MINILM)
    assert second == first
    assert (second.stat().st_mtime_ns, second.stat().st_ino) == stamp
    assert again == []
    assert first.name.startswith("all-MiniLM-L6-v2-") and first.name.endswith(".q8_0.gguf")
    assert sorted(p.name for p in tmp_path.iterdir()) == [first.name]  # no temp files left


def test_changed_source_rebuilds_into_a_new_file(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(default_model_source(), src)
    cache = tmp_path / "cache"
    before = ensure_default_model(cache, src_dir=src, name=MINILM)
    stamp = before.stat().st_mtime_ns
    with (src / "config.json").open("a") as fh:
        fh.write("\n")  # same model, different bytes
    after = ensure_default_model(cache, src_dir=src, name=MINILM)
    assert after != before
    assert before.stat().st_mtime_ns == stamp
    old_vec = GgufEmbedder(before).embed_one("same weights")
    new_vec = GgufEmbedder(after).embed_one("same weights")
    np.testing.assert_allclose(old_vec, new_vec, atol=1e-6)


def test_source_hash_covers_converter_version_and_bytes(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("config.json", "vocab.txt", "model.safetensors"):
        (src / name).write_bytes(b"x")
    first = source_hash(src)
    assert first == source_hash(src)
    (src / "vocab.txt").write_bytes(b"y")
    assert source_hash(src) != first
    assert CONVERTER_VERSION  # part of the hash; a converter change rebuilds


def test_concurrent_builders_leave_one_good_file(tmp_path: Path) -> None:
    paths: list[Path] = []
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def build() -> None:
        try:
            start.wait(timeout=10)
            paths.append(ensure_default_model(tmp_path, name=MINILM))
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors and len(paths) == 2 and paths[0] == paths[1]
    assert [p.name for p in tmp_path.iterdir()] == [paths[0].name]
    vector = GgufEmbedder(paths[0]).embed_one("still a valid model")
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_converter_writes_atomically_into_place(tmp_path: Path) -> None:
    out = tmp_path / "model.gguf"
    out.write_bytes(b"old contents")
    convert_bert_to_gguf(default_model_source(), out)
    assert out.read_bytes()[:4] == b"GGUF"
    assert [p.name for p in tmp_path.iterdir()] == ["model.gguf"]


# --- configured models and errors --------------------------------------------------------


def test_configured_model_path_is_used_with_a_file_hash_id(
    model_path: Path, tmp_path: Path
) -> None:
    configured = load_embedder(model_path, tmp_path)
    digest = hashlib.sha256(model_path.read_bytes()).hexdigest()
    assert configured.model_id == f"gguf:{model_path.name}:{digest[:12]}"
    assert configured.dim == 384
    assert list(tmp_path.iterdir()) == []  # nothing converted for a configured model


def test_default_model_id_names_the_source(embedder: GgufEmbedder) -> None:
    assert embedder.model_id == f"all-MiniLM-L6-v2-q8_0-{source_hash(default_model_source())[:12]}"


def _assert_model_error(action: Callable[[], object], path: Path) -> None:
    with pytest.raises(ModelError) as caught:
        action()
    assert caught.value.code == "model_unavailable"
    assert str(path) in str(caught.value)
    assert str(caught.value) == caught.value.message


def test_missing_model_path_raises_model_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "model.gguf"
    _assert_model_error(lambda: load_embedder(missing, tmp_path), missing)
    _assert_model_error(lambda: GgufEmbedder(missing).embed(["x"]), missing)


def test_garbage_model_file_raises_model_error(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"this is not a model" * 100)
    _assert_model_error(lambda: load_embedder(garbage, tmp_path), garbage)
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    _assert_model_error(lambda: load_embedder(empty, tmp_path), empty)


def test_truncated_gguf_fails_in_llama_cpp_as_model_error(model_path: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(model_path.read_bytes()[: model_path.stat().st_size // 2])
    half = GgufEmbedder(broken)
    assert half.dim == 384  # the header is intact: it is llama.cpp that refuses it
    _assert_model_error(lambda: half.embed(["x"]), broken)
