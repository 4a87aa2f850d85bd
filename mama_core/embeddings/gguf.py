"""Sentence embeddings from a GGUF model through llama.cpp (llama-cpp-python).

The model is loaded on the first ``embed`` call, not when the embedder is made, so
starting MAMA costs nothing until something is recalled or remembered. Texts are
tokenised by llama.cpp, truncated to ``max_tokens`` word pieces the way
sentence-transformers truncates (``[CLS]`` + first pieces + ``[SEP]``), packed many
per llama.cpp batch, pooled by llama.cpp as the file says (mean for MiniLM) and
L2-normalised here in float32.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import hashlib
import logging
import mmap
import os
import struct
import sys
import threading
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mama_core.embeddings.base import (
    MINILM_SCALE,
    PASSAGE,
    ROLES,
    SCORE_SCALES,
    Role,
    ScoreScale,
    l2_normalise,
)
from mama_core.embeddings.errors import ModelError

if TYPE_CHECKING:
    import llama_cpp

_LOG = logging.getLogger(__name__)

# sentence-transformers' max_seq_length for all-MiniLM-L6-v2: longer texts lose their tail.
DEFAULT_MAX_TOKENS = 256
# Tokens per llama.cpp decode. BERT attends over the whole batch at once, so this is
# also the micro-batch; 512 fits one full-length text and keeps the attention small.
DEFAULT_BATCH_TOKENS = 512

# llama.cpp reserves an output buffer of vocabulary x tokens floats for every context,
# even for embeddings, which never fill it (llama_context::output_reserve: logits are
# always sized; at creation for n_seq_max rows, then for the tokens of the largest
# decode, never shrinking). For e5's 250k-word vocabulary that is 1 MB per token. So
# there are two kinds of context. The one kept while the model is loaded serves a
# search or a save (a few texts, one decode): its n_seq_max is chosen so its buffer
# starts at no more than QUERY_OUTPUT_BYTES, and its n_batch = n_ubatch = n_ctx fits one
# text at the token cap. A call with more texts than that makes a bulk context instead
# (n_seq_max fitting KEEP_OUTPUT_BYTES, n_batch up to DEFAULT_BATCH_TOKENS, cut so the
# buffer never passes MAX_OUTPUT_BYTES); a bulk context, or a query context that a long
# text grew, is freed CONTEXT_IDLE_S after its last call (the model stays loaded).
# MiniLM (30k words, 0.12 MB per token) is barely touched by any of this.
QUERY_OUTPUT_BYTES = 4 << 20
KEEP_OUTPUT_BYTES = 32 << 20
MAX_OUTPUT_BYTES = 256 << 20
# A grown context is freed after this many seconds without a call, not at once: a bulk
# run (catch-up, reindex) calls back to back and would otherwise make and clear a new
# 256 MB buffer for every batch.
CONTEXT_IDLE_S = 2.0
_MAX_SEQ = 256  # llama.cpp's LLAMA_MAX_SEQ

# What the model wants in front of each role's text (convert_e5 writes them; absent: none).
_QUERY_PREFIX_KEY = "mama.embedding.query_prefix"
_PASSAGE_PREFIX_KEY = "mama.embedding.passage_prefix"

_LOWERCASE_KEY = "tokenizer.ggml.normalizer.lowercase"
_STRIP_ACCENTS_KEY = "tokenizer.ggml.normalizer.strip_accents"

# llama.h's enum llama_pooling_type
_POOLING_UNSPECIFIED, _POOLING_NONE, _POOLING_MEAN, _POOLING_RANK = -1, 0, 1, 4


class GgufEmbedder:
    """An ``Embedder`` over a GGUF sentence-embedding model (BERT family) run by llama.cpp.

    Safe to call from several threads: one lock serialises loading and every batch,
    since a llama.cpp context is not re-entrant.
    """

    def __init__(
        self,
        model_path: Path,
        *,
        model_id: str | None = None,
        n_threads: int | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        idle_release_s: float | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        self.n_threads = n_threads or min(4, os.cpu_count() or 1)
        self.batch_tokens = max(batch_tokens, max_tokens)
        self._requested_max_tokens = max_tokens
        self._model_id = model_id
        self._header: _Header | None = None
        self._lock = threading.Lock()
        self._runtime: _Runtime | None = None
        # After this many seconds without a call the model is freed (loaded again on the
        # next call): a long-running process (the tray) then holds no model while idle.
        self.idle_release_s = idle_release_s
        self.released = threading.Event()
        """Set each time an idle release has freed the model."""
        self.context_released = threading.Event()
        """Set each time a grown context was freed after CONTEXT_IDLE_S without a call."""
        self._last_use = 0.0
        self._timer: threading.Timer | None = None

    @property
    def model_id(self) -> str:
        """Given at construction, or ``gguf:<file name>:<first 12 hex of the file's sha256>``."""
        if self._model_id is None:
            self._model_id = f"gguf:{self.model_path.name}:{_file_sha256(self.model_path)[:12]}"
        return self._model_id

    @property
    def dim(self) -> int:
        """Vector length, read from the file's metadata without loading the model."""
        return self._read_header().dim

    @property
    def is_loaded(self) -> bool:
        """Whether llama.cpp holds the model in memory (it loads on the first ``embed``)."""
        return self._runtime is not None

    @property
    def max_tokens(self) -> int:
        """Word pieces per text, counting ``[CLS]`` and ``[SEP]``; the rest is cut off."""
        return min(self._requested_max_tokens, self._read_header().context_length)

    def prefix(self, role: Role) -> str:
        """What goes in front of a ``role`` text for this model (from the file's metadata)."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, not {role!r}")
        header = self._read_header()
        return header.query_prefix if role == "query" else header.passage_prefix

    @property
    def score_scale(self) -> ScoreScale:
        """Where this model's cosines mean related / the same thing (``SCORE_SCALES``)."""
        return SCORE_SCALES.get(self._read_header().name, MINILM_SCALE)

    def embed(self, texts: Sequence[str], role: Role = PASSAGE) -> np.ndarray:
        """An (n, dim) float32 array of unit vectors, one row per text, in order."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; use embed_one() for one text")
        prefix = self.prefix(role)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            runtime = self._load()
            ids = [runtime.token_ids(prefix + text, self.max_tokens) for text in texts]
            try:
                return l2_normalise(runtime.embed_ids(ids))
            finally:
                self._schedule_release()

    def embed_one(self, text: str, role: Role = PASSAGE) -> np.ndarray:
        """One (dim,) float32 unit vector."""
        return self.embed([text], role)[0]

    def token_ids(self, text: str, role: Role | None = None) -> list[int]:
        """The token ids ``embed`` feeds the model for ``text`` (with ``role``'s prefix,
        none if ``role`` is None), after truncation."""
        prefix = "" if role is None else self.prefix(role)
        with self._lock:
            return self._load().token_ids(prefix + text, self.max_tokens)

    def _schedule_release(self) -> None:
        """(Under the lock.) Note a use; make sure a timer will free what idling frees."""
        self._last_use = time.monotonic()
        self.released.clear()
        large = self._runtime is not None and self._runtime.holds_large_context
        if (large or self.idle_release_s is not None) and self._timer is None:
            self._start_timer(CONTEXT_IDLE_S if large else self.idle_release_s or CONTEXT_IDLE_S)

    def _start_timer(self, delay: float) -> None:
        timer = threading.Timer(max(delay, 0.01), self._release_if_idle)
        timer.daemon = True
        self._timer = timer
        timer.start()

    def _release_if_idle(self) -> None:
        """Timer: free a grown context after CONTEXT_IDLE_S, the model after idle_release_s."""
        with self._lock:
            if self._timer is None:
                return  # closed meanwhile
            self._timer = None
            idle = time.monotonic() - self._last_use
            runtime = self._runtime
            if runtime is not None and runtime.holds_large_context and idle >= CONTEXT_IDLE_S:
                runtime.release_context()
                _return_freed_memory()
                self.context_released.set()
            if self.idle_release_s is not None and idle >= self.idle_release_s and runtime:
                runtime.close()
                self._runtime = runtime = None
                _return_freed_memory()
                _LOG.debug("embedding model %s freed after %.0f s idle", self.model_path.name, idle)
                self.released.set()
            waits: list[float] = []
            if runtime is not None and runtime.holds_large_context:
                waits.append(CONTEXT_IDLE_S - idle)
            if runtime is not None and self.idle_release_s is not None:
                waits.append(self.idle_release_s - idle)
            if waits:
                self._start_timer(min(waits))

    def close(self) -> None:
        """Free the llama.cpp model; the next ``embed`` loads it again."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._runtime is not None:
                self._runtime.close()
                self._runtime = None

    def _read_header(self) -> _Header:
        if self._header is None:
            self._header = _Header.read(self.model_path)
        return self._header

    def _load(self) -> _Runtime:
        if self._runtime is None:
            self._runtime = _Runtime.load(
                self.model_path,
                self._read_header(),
                self.n_threads,
                self.batch_tokens,
                self.max_tokens,
            )
        return self._runtime


@dataclass(frozen=True)
class _Header:
    """The few metadata values we need, read straight from the GGUF key/value section."""

    dim: int
    context_length: int
    pooling: int | None
    # (lowercase, strip_accents) for a WordPiece vocabulary, else None.
    bert_case: tuple[bool, bool] | None
    query_prefix: str = ""
    passage_prefix: str = ""
    name: str = ""
    """The model's ``general.name`` (what ``SCORE_SCALES`` knows it by)."""

    @classmethod
    def read(cls, path: Path) -> _Header:
        if not path.is_file():
            raise ModelError(
                f"The embedding model file {path} does not exist; "
                "fix the configured model path or remove it to use the default model.",
                details={"path": str(path)},
            )
        try:
            meta = _read_gguf_metadata(path)
            arch = meta["general.architecture"]
            dim = meta[f"{arch}.embedding_length"]
            context_length = meta.get(f"{arch}.context_length", DEFAULT_BATCH_TOKENS)
            pooling = meta.get(f"{arch}.pooling_type")
            bert_case = None
            if meta.get("tokenizer.ggml.model") == "bert":
                # llama.cpp's defaults when the keys are absent.
                lowercase = bool(meta.get(_LOWERCASE_KEY, True))
                bert_case = (lowercase, bool(meta.get(_STRIP_ACCENTS_KEY, lowercase)))
        except (OSError, ValueError, KeyError, struct.error, UnicodeDecodeError) as exc:
            raise ModelError(
                f"The embedding model file {path} is not a readable GGUF embedding model; "
                "configure a GGUF sentence-embedding model or remove the setting "
                "to use the default model.",
                details={"path": str(path), "reason": repr(exc)},
            ) from exc
        query_prefix = meta.get(_QUERY_PREFIX_KEY, "")
        passage_prefix = meta.get(_PASSAGE_PREFIX_KEY, "")
        name = meta.get("general.name", "")
        if (
            not isinstance(dim, int)
            or not isinstance(context_length, int)
            or not isinstance(query_prefix, str)
            or not isinstance(passage_prefix, str)
        ):
            raise ModelError(f"The embedding model file {path} has malformed metadata.")
        return cls(
            dim,
            context_length,
            pooling if isinstance(pooling, int) else None,
            bert_case,
            query_prefix,
            passage_prefix,
            name if isinstance(name, str) else "",
        )


class _Runtime:
    """A loaded llama.cpp model with its tokenizer, and an embedding context made when
    needed and freed when it holds too much (see ``KEEP_OUTPUT_BYTES``)."""

    def __init__(
        self,
        llama: llama_cpp.Llama,
        n_batch: int,
        bert_case: tuple[bool, bool] | None,
        pooling: int,
        n_threads: int,
        max_tokens: int,
    ) -> None:
        import llama_cpp

        self._llama_cpp = llama_cpp
        self.llama = llama
        self.bert_case = bert_case
        self.dim = int(llama.n_embd())
        self.token_bytes = max(int(llama.n_vocab()), 1) * 4
        # A full-length text must fit one decode; past that, keep the buffer bounded.
        # (Multiples of 64 and powers of two: llama.cpp's graph asserts on odd sizes here.)
        cap = MAX_OUTPUT_BYTES // self.token_bytes // 64 * 64
        one_text = max(-(-max_tokens // 64) * 64, 64)
        self.n_batch = max(min(n_batch, cap), one_text)
        self.n_seq_max = _seqs_fitting(KEEP_OUTPUT_BYTES // self.token_bytes, self.n_batch)
        self.query_batch = one_text
        self.query_seqs = _seqs_fitting(QUERY_OUTPUT_BYTES // self.token_bytes, one_text)
        self._n_threads = n_threads
        self._pooling = pooling
        self._ctx: Any = None
        self._ctx_bulk = False  # whether _ctx is a bulk context (else a query one)
        self._reserved_tokens = 0  # rows of the context's output buffer
        self.batch = llama_cpp.llama_batch_init(self.n_batch, 0, self.n_seq_max)
        # The specials llama.cpp puts around a text ([CLS] … [SEP] for BERT), so a
        # long text can be cut inside them, as sentence-transformers does.
        bare = llama.tokenize(b"a", add_bos=False)
        full = llama.tokenize(b"a", add_bos=True)
        start = next(i for i in range(len(full)) if full[i : i + len(bare)] == bare)
        self.prefix = full[:start]
        self.suffix = full[start + len(bare) :]

    @property
    def has_context(self) -> bool:
        return self._ctx is not None

    @classmethod
    def load(
        cls, path: Path, header: _Header, n_threads: int, n_batch: int, max_tokens: int
    ) -> _Runtime:
        import llama_cpp

        if header.pooling == _POOLING_RANK:
            raise ModelError(
                f"{path} is a reranking model, not a sentence-embedding model; "
                "configure a GGUF sentence-embedding model.",
                details={"path": str(path)},
            )
        # A file without pooling would give one vector per token; mean is what
        # sentence-transformers models use.
        pooling = _POOLING_MEAN if header.pooling in (None, _POOLING_NONE) else _POOLING_UNSPECIFIED
        # llama.cpp's WordPiece normaliser maps each character to one base character,
        # which loses Hangul syllables' vowels and finals and strips spacing marks
        # (Devanagari vowel signs) that BERT keeps. We apply BERT's own normalisation
        # in Python instead and tell llama.cpp to leave the case and accents alone.
        overrides: dict[str, bool | int | float | str] | None = None
        if header.bert_case is not None:
            overrides = {_LOWERCASE_KEY: False, _STRIP_ACCENTS_KEY: False}
        _route_llama_logs()
        try:
            # The Llama object loads the model and tokenizes; its own context is kept
            # tiny (one row of output), the embedding context is ours (_context).
            llama = llama_cpp.Llama(
                str(path),
                n_ctx=8,
                n_batch=8,
                n_ubatch=8,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                pooling_type=_POOLING_NONE,
                kv_overrides=overrides,
                verbose=False,
            )
            runtime = cls(llama, n_batch, header.bert_case, pooling, n_threads, max_tokens)
            runtime._context()  # fail here, at load, if llama.cpp cannot make one
            return runtime
        except (ValueError, RuntimeError, OSError, StopIteration) as exc:
            raise ModelError(
                f"llama.cpp could not load the embedding model {path}; "
                "configure a GGUF sentence-embedding model or remove the setting "
                "to use the default model.",
                details={"path": str(path), "reason": str(exc), "llama_log": list(_RECENT_LOG)},
            ) from exc

    def _context_params(self, bulk: bool) -> Any:
        lib = self._llama_cpp
        params = lib.llama_context_default_params()
        size = self.n_batch if bulk else self.query_batch
        params.n_ctx = params.n_batch = params.n_ubatch = size
        params.n_seq_max = self.n_seq_max if bulk else self.query_seqs
        params.n_threads = params.n_threads_batch = self._n_threads
        params.embeddings = True
        params.pooling_type = self._pooling
        params.kv_unified = True
        # Packed texts attend only within themselves through a mask; flash attention
        # skips the masked blocks (about 3x the throughput of a full 512-token batch on
        # 2 cores, same vectors to 1e-4).
        params.flash_attn_type = lib.LLAMA_FLASH_ATTN_TYPE_ENABLED
        return params

    def _context(self, bulk: bool = False) -> Any:
        """A query context, or a bulk one if ``bulk`` (a bulk context serves both)."""
        if self._ctx is not None and bulk and not self._ctx_bulk:
            self.release_context()
        if self._ctx is None:
            ctx = self._llama_cpp.llama_init_from_model(
                self.llama.model, self._context_params(bulk)
            )
            if not ctx:
                raise RuntimeError("llama_init_from_model returned no context")
            self._ctx = ctx
            self._ctx_bulk = bulk
            self._reserved_tokens = self.n_seq_max if bulk else self.query_seqs
        return self._ctx

    @property
    def holds_bulk_context(self) -> bool:
        return self._ctx is not None and self._ctx_bulk

    @property
    def reserved_bytes(self) -> int:
        """The context's output buffer (rows reserved x vocabulary floats)."""
        return self._reserved_tokens * self.token_bytes if self._ctx is not None else 0

    @property
    def holds_large_context(self) -> bool:
        """Whether the context is a bulk one, or its output buffer grew past
        ``QUERY_OUTPUT_BYTES``: either is freed once idle."""
        grown = self._reserved_tokens * self.token_bytes > QUERY_OUTPUT_BYTES
        return self._ctx is not None and (self._ctx_bulk or grown)

    def release_context(self) -> None:
        if self._ctx is not None:
            self._llama_cpp.llama_free(self._ctx)
            self._ctx = None
            self._reserved_tokens = 0

    def token_ids(self, text: str, max_tokens: int) -> list[int]:
        if self.bert_case is not None:
            text = bert_normalise(text, *self.bert_case)
        body = self.llama.tokenize(text.encode("utf-8", "replace"), add_bos=False)
        room = max(max_tokens - len(self.prefix) - len(self.suffix), 0)
        return [*self.prefix, *body[:room], *self.suffix]

    def embed_ids(self, sequences: list[list[int]]) -> np.ndarray:
        """Pooled, not yet normalised vectors, packing as many texts per decode as fit.

        A search or a save (texts that fit one decode of the query context) runs in the
        query context; anything more in a bulk context."""
        out = np.empty((len(sequences), self.dim), dtype=np.float32)
        tokens = sum(len(ids) for ids in sequences)
        if len(sequences) <= self.query_seqs and tokens <= self.query_batch:
            if sequences:
                self._decode(sequences, out, self._context())
            return out
        ctx = self._context(bulk=True)
        start = 0
        while start < len(sequences):
            stop, used = start, 0
            while (
                stop < len(sequences)
                and stop - start < self.n_seq_max
                and used + len(sequences[stop]) <= self.n_batch
            ):
                used += len(sequences[stop])
                stop += 1
            self._decode(sequences[start:stop], out[start:stop], ctx)
            start = stop
        return out

    def _decode(self, sequences: list[list[int]], out: np.ndarray, ctx: Any) -> None:
        lib = self._llama_cpp
        batch = self.batch
        n = 0
        for seq_id, ids in enumerate(sequences):
            for pos, token in enumerate(ids):
                batch.token[n] = token
                batch.pos[n] = pos
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = seq_id
                batch.logits[n] = True
                n += 1
        batch.n_tokens = n
        self._reserved_tokens = max(self._reserved_tokens, n)
        memory = lib.llama_get_memory(ctx)
        if memory:
            lib.llama_memory_clear(memory, True)
            code = lib.llama_decode(ctx, batch)
        else:
            # Encoder-only models (BERT) keep no cache; decode would log a warning
            # on every call and then encode anyway.
            code = lib.llama_encode(ctx, batch)
        if code != 0:
            raise ModelError(
                f"llama.cpp failed to embed with {self.llama.model_path} (code {code}); "
                "restart MAMA, and if it persists configure another embedding model.",
                details={"code": code, "llama_log": list(_RECENT_LOG)},
            )
        for seq_id in range(len(sequences)):
            pointer = lib.llama_get_embeddings_seq(ctx, seq_id)
            if not pointer:
                raise ModelError(
                    f"llama.cpp returned no pooled vector for {self.llama.model_path}."
                )
            out[seq_id] = np.ctypeslib.as_array(pointer, shape=(self.dim,))

    def close(self) -> None:
        self.release_context()
        self._llama_cpp.llama_batch_free(self.batch)
        self.llama.close()


def _seqs_fitting(rows: int, n_batch: int) -> int:
    """The largest power of two at most ``rows``, ``n_batch`` and llama.cpp's sequence
    limit (at least 1): a context's n_seq_max."""
    return 1 << max(min(rows, n_batch, _MAX_SEQ), 1).bit_length() - 1


def _return_freed_memory() -> None:
    """Hand the heap llama.cpp freed back to the system (glibc's ``malloc_trim``).

    Its vocabulary tables are hundreds of thousands of small allocations; freed, they
    stay in glibc's arenas and the process keeps them resident (measured: 266 MB after
    freeing e5 in a tray-like process, 134 MB after a trim). Elsewhere a no-op.
    """
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


def bert_normalise(text: str, lowercase: bool, strip_accents: bool) -> str:
    """BERT's case and accent handling, as Hugging Face's ``BertNormalizer`` does it.

    Accents are stripped first (NFD, then drop nonspacing marks only), then each
    character is lowercased on its own (no final-sigma rule), which is the order and
    the rules of the tokenizer the model was trained with.
    """
    if strip_accents:
        decomposed = unicodedata.normalize("NFD", text)
        text = "".join(ch for ch in decomposed if unicodedata.category(ch) != "Mn")
    if lowercase:
        text = "".join(ch.lower() for ch in text)
    return text


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    except OSError as exc:
        raise ModelError(
            f"Cannot read the embedding model file {path} ({exc.strerror}); "
            "fix the configured model path or remove it to use the default model.",
            details={"path": str(path)},
        ) from exc
    return digest.hexdigest()


# --- reading GGUF metadata ---------------------------------------------------------
# gguf.GGUFReader parses every vocabulary string into numpy views (about half a
# second for a BERT vocabulary); ``dim`` should be cheap, so we walk the key/value
# section ourselves, keeping scalars and strings and stepping over arrays.

_GGUF_MAGIC = b"GGUF"
_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9


def _read_gguf_metadata(path: Path) -> dict[str, Any]:
    """Scalar and string key/values of a GGUF (v2 or v3) file; arrays are skipped."""
    with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        if buf[:4] != _GGUF_MAGIC:
            raise ValueError("no GGUF magic")
        version, _n_tensors, n_kv = struct.unpack_from("<IQQ", buf, 4)
        if version < 2:
            raise ValueError(f"GGUF version {version} is too old")
        offset = 24
        meta: dict[str, Any] = {}
        for _ in range(n_kv):
            key, offset = _read_string(buf, offset)
            (value_type,) = struct.unpack_from("<I", buf, offset)
            offset += 4
            if value_type == _ARRAY:
                item_type, count = struct.unpack_from("<IQ", buf, offset)
                offset = _skip_array(buf, offset + 12, item_type, count)
            elif value_type == _STRING:
                meta[key], offset = _read_string(buf, offset)
            else:
                fmt = _SCALARS[value_type]
                (meta[key],) = struct.unpack_from(fmt, buf, offset)
                offset += struct.calcsize(fmt)
        return meta


def _read_string(buf: mmap.mmap, offset: int) -> tuple[str, int]:
    (length,) = struct.unpack_from("<Q", buf, offset)
    start = offset + 8
    if start + length > len(buf):
        raise ValueError("string runs past the end of the file")
    return buf[start : start + length].decode("utf-8"), start + length


def _skip_array(buf: mmap.mmap, offset: int, item_type: int, count: int) -> int:
    if item_type == _STRING:
        for _ in range(count):
            (length,) = struct.unpack_from("<Q", buf, offset)
            offset += 8 + length
    elif item_type in _SCALARS:
        offset += count * struct.calcsize(_SCALARS[item_type])
    else:
        raise ValueError(f"unsupported GGUF array item type {item_type}")
    if offset > len(buf):
        raise ValueError("array runs past the end of the file")
    return offset


# --- llama.cpp's log ------------------------------------------------------------------
# llama.cpp writes its loading chatter to stderr. Route it to Python logging (DEBUG)
# instead, and keep the last few lines so a load failure can say what went wrong.

_RECENT_LOG: collections.deque[str] = collections.deque(maxlen=20)
_log_callbacks: list[Any] = []  # ctypes keeps only a raw pointer: hold the callback here
_log_lock = threading.Lock()


def _route_llama_logs() -> None:
    with _log_lock:
        if not _log_callbacks:
            _log_callbacks.append(_install_log_callback())


def _install_log_callback() -> Any:
    import llama_cpp

    @llama_cpp.llama_log_callback
    def forward(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        line = text.decode("utf-8", "replace").rstrip("\n")
        if line:
            _RECENT_LOG.append(line)
            _LOG.debug("llama.cpp[%d]: %s", level, line)

    llama_cpp.llama_log_set(forward, ctypes.c_void_p(0))
    return forward
