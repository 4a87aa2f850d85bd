"""The settings file: defaults left out, env overrides applied on load but never
written back, bad files named in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.local.settings import Settings, SettingsError


def test_an_env_override_is_used_but_not_written_into_the_file(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"local_model_path": "/models/mine.gguf"}), "utf-8")
    clean_env.setenv("MAMA_LOCAL_MODEL", "/srv/test.gguf")

    loaded = Settings.load(path)
    assert loaded.local_model_path == Path("/srv/test.gguf")  # the override is in force
    loaded.model_copy(update={"guidance_budget_tokens": 2500}).save(path)
    assert json.loads(path.read_text("utf-8")) == {
        "local_model_path": "/models/mine.gguf",  # the owner's own choice kept
        "guidance_budget_tokens": 2500,
    }
    # Control: a value the owner chose (not the override) is written.
    loaded.model_copy(update={"local_model_path": Path("/models/other.gguf")}).save(path)
    assert json.loads(path.read_text("utf-8"))["local_model_path"] == "/models/other.gguf"
    clean_env.delenv("MAMA_LOCAL_MODEL")
    assert Settings.load(path).local_model_path == Path("/models/other.gguf")


def test_an_override_with_nothing_on_disk_leaves_the_field_out(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.json"
    clean_env.setenv("MAMA_EMBEDDING_MODEL", "/srv/embed.gguf")
    Settings.load(path).save(path)
    assert json.loads(path.read_text("utf-8")) == {}


def test_a_bad_value_is_one_line_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"guidance_budget_tokens": 5}), "utf-8")
    with pytest.raises(SettingsError) as bad:
        Settings.load(path)
    assert "guidance_budget_tokens" in bad.value.message and "\n" not in bad.value.message


def test_connectors_round_trip_and_names_are_unique(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    entry = {"name": "work", "kind": "trello", "interval_s": 30, "options": {"boards": "A,B"}}
    path.write_text(json.dumps({"connectors": [entry]}))
    settings = Settings.load(path)
    config = settings.connector("work")
    assert config is not None and config.options == {"boards": "A,B"} and config.enabled
    settings.save(path)
    assert Settings.load(path) == settings  # what is written reads back the same
    path.write_text(json.dumps({"connectors": [entry, entry]}))
    with pytest.raises(SettingsError, match="connector names must be unique: work"):
        Settings.load(path)
    path.write_text(json.dumps({"connectors": [{**entry, "name": "Work Board"}]}))
    with pytest.raises(SettingsError, match=r"connectors\.0\.name"):
        Settings.load(path)
