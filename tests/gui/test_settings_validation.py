"""Whatever the settings file holds, the app starts: bad values fall back to their defaults."""

from __future__ import annotations

import logging

import pytest

from attn_studio.gui import presentation, settings


@pytest.fixture
def store():
    return settings.settings()


@pytest.mark.parametrize("value, expected", [
    ("nan", 1.0), (float("nan"), 1.0), ("inf", 1.0), ("big", 1.0), ([1, 2], 1.0),
    (99, presentation.ZOOM_STEPS[-1]), (0.01, presentation.ZOOM_STEPS[0]), ("1.5", 1.5),
])
def test_zoom_is_checked_and_clamped(store, value, expected):
    store.setValue("zoom", value)
    store.sync()
    assert settings.load(settings.settings()).zoom == expected


def test_unknown_theme_and_colour_map_fall_back_with_a_note(store, caplog):
    store.setValue("theme", "neon")
    store.setValue("colormap", "rainbow")
    store.setValue("recentFiles", 42)
    store.setValue("geometry", "not bytes")
    store.sync()
    with caplog.at_level(logging.WARNING, logger="attn_studio.gui.settings"):
        prefs = settings.load(settings.settings())
    assert (prefs.theme, prefs.colormap, prefs.recent_files, prefs.geometry) == ("light", "viridis", [], None)
    logged = caplog.text
    assert "neon" in logged and "rainbow" in logged and "recentFiles" in logged


def test_good_values_are_kept(store):
    store.setValue("theme", "dark")
    store.setValue("colormap", "cividis")
    store.setValue("recentFiles", ["/a.attn.json", "/b.attn.json"])
    store.sync()
    prefs = settings.load(settings.settings())
    assert (prefs.theme, prefs.colormap, prefs.recent_files) == ("dark", "cividis", ["/a.attn.json", "/b.attn.json"])


def test_window_starts_on_a_hostile_settings_file(qtbot):
    path = settings.data_dir() / "settings.ini"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[General]\nzoom=nan\ntheme=@Variant(garbage)\ncolormap=\nrecentFiles=1, 2\n"
                    "geometry=@ByteArray(xx)\nwindowState=zz\n\x00\xff\n", encoding="latin-1")
    from attn_studio.gui import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    assert presentation.STYLE.zoom == 1.0
    assert presentation.STYLE.theme.name == "light"
    assert window.windowTitle().startswith("journey")
