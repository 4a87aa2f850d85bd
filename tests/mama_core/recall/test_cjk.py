"""Chinese, Japanese and Korean text is found by the lexical arm (trigram index)."""

from __future__ import annotations

from mama_core.recall import PRESETS
from tests.mama_core.recall.world import World

BM25 = PRESETS["bm25_only"]


def _seed(world: World) -> dict[str, int]:
    return {
        "zh": world.save("我们决定下个月把数据库迁移到新的服务器"),
        "ja": world.save("東京タワーの近くで来週の会議を開くことにしました"),
        "ko": world.save("회의는 매주 화요일 오전에 진행하기로 했습니다"),
        "en": world.save("The weekly meeting moves to Tuesday mornings"),
    }


def test_chinese_found(world: World) -> None:
    ids = _seed(world)
    hits = world.search("数据库迁移", config=BM25)
    assert [h.id for h in hits] == [ids["zh"]]
    assert hits[0].arms["trigram"].rank == 1


def test_japanese_found(world: World) -> None:
    ids = _seed(world)
    assert world.ids("東京タワー 会議", config=BM25)[0] == ids["ja"]


def test_korean_found_with_particles(world: World) -> None:
    ids = _seed(world)
    # "화요일에" (on Tuesday) is not a word of the memory, but shares its trigrams.
    assert world.ids("화요일에 회의", config=BM25)[0] == ids["ko"]


def test_short_cjk_word_uses_substring_scan(world: World) -> None:
    ids = _seed(world)
    assert world.ids("会議", config=BM25) == [ids["ja"]]
    # Control: a two-character word that is nowhere finds nothing.
    assert world.ids("猫犬", config=BM25) == []


def test_fused_search_finds_cjk_too(world: World) -> None:
    ids = _seed(world)
    assert world.ids("数据库迁移")[0] == ids["zh"]
