"""The FTS5 query builder: user text is tokenised by us and only ever quoted."""

from __future__ import annotations

import sqlcipher3
from hypothesis import given
from hypothesis import strategies as st

from mama_core.recall.lexical_query import build_lexical_query, quote_fts, split_runs


def test_stopwords_dropped_and_tokens_quoted() -> None:
    q = build_lexical_query("When did Caroline go to the LGBTQ support group?")
    assert q.words == ("caroline", "go", "lgbtq", "support", "group")
    assert q.word_match() == '"caroline" OR "go" OR "lgbtq" OR "support" OR "group"'


def test_only_stopwords_still_searches_them() -> None:
    q = build_lexical_query("Who was it?")
    assert q.words == ("who", "was", "it")


def test_fts_syntax_is_just_text() -> None:
    q = build_lexical_query('NEAR(deploy* ^prod) AND "x" OR col:val -zed')
    assert q.words == ("near", "deploy", "prod", "x", "col", "val", "zed")
    assert all(w.isalnum() for w in q.words)


def test_cjk_goes_to_trigrams_korean_to_both() -> None:
    q = build_lexical_query("東京タワー 고양이를 좋아해요 猫")
    assert "東京タ" in q.trigrams and "タワー" in q.trigrams
    assert "고양이를" in q.words and "고양이" in q.trigrams
    assert q.short == ("猫",)


def test_mixed_script_token_is_split_by_script() -> None:
    runs = split_runs("iPhone用のケース")
    assert runs == [("spaced", "iphone"), ("unsegmented", "用のケース")]


def test_full_width_and_case_folded() -> None:
    assert build_lexical_query("\uff2d\uff21\uff2d\uff21 Stra\u00dfe").words == ("mama", "strasse")


def test_quote_doubles_inner_quotes() -> None:
    assert quote_fts('a"b') == '"a""b"'


@given(st.text())
def test_every_expression_is_valid_fts5(text: str) -> None:
    """Whatever the text, the built expressions parse as FTS5 queries."""
    q = build_lexical_query(text)
    conn = sqlcipher3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE w USING fts5(a, tokenize='porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(a, tokenize='trigram')")
    for table, match in (("w", q.word_match()), ("t", q.trigram_match()), ("t", q.partial_match())):
        if match:
            conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (match,)).fetchall()
    conn.close()
