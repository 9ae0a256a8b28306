"""A font for figures that can draw Chinese: labels must render as characters, never as boxes.

Looks for a CJK-capable font known to matplotlib (Debian's fonts-noto-cjk gives Noto Sans CJK),
and configures matplotlib to use it. If none is found, it says which package to install.
"""

from __future__ import annotations

from functools import lru_cache

# Families tried in order; the first one matplotlib can find wins.
CJK_FAMILIES = (
    "Noto Sans CJK SC",
    "Noto Sans CJK JP",
    "Noto Serif CJK SC",
    "Source Han Sans SC",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "Droid Sans Fallback",
    "PingFang SC",
    "Microsoft YaHei",
    "SimHei",
)
INSTALL_HINT = "install a CJK font, e.g. `apt-get install fonts-noto-cjk` (Debian/Ubuntu)"


class FontMissing(RuntimeError):
    """No font that can draw Chinese characters was found."""


@lru_cache(maxsize=1)
def cjk_font_path() -> str:
    """The file of the first CJK-capable font found, or FontMissing naming the package to install."""
    from matplotlib import font_manager

    for family in CJK_FAMILIES:
        try:
            return font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
        except ValueError:
            continue
    raise FontMissing(f"no font that can draw Chinese was found; {INSTALL_HINT}")


def setup_matplotlib() -> str:
    """Use the Agg backend and the CJK font for all text; returns the font's family name."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import font_manager, rcParams

    path = cjk_font_path()
    font_manager.fontManager.addfont(path)
    name = font_manager.FontProperties(fname=path).get_name()
    rcParams["font.family"] = "sans-serif"
    rcParams["font.sans-serif"] = [name, "DejaVu Sans"]
    rcParams["axes.unicode_minus"] = False  # the CJK font may lack U+2212
    return name


def missing_glyphs(text: str, font_path: str | None = None) -> list[str]:
    """The characters of `text` that the font has no glyph for (used by tests and by figures)."""
    from matplotlib.ft2font import FT2Font

    font = FT2Font(font_path or cjk_font_path())
    charmap = font.get_charmap()
    return sorted({c for c in text if not c.isspace() and ord(c) not in charmap})
