"""The page's files in static/: what the server sends (server.py) and the export inlines (export.py).

    asset("index.html")    a file's text
    STYLES                 the stylesheets index.html links: app.css, each panel's NAME.css, the cards' and the tour's

One module of its own, so that the export (which the server's "Export this view" route calls) needs
nothing of the server.
"""

from __future__ import annotations

from importlib import resources

# the panels, each its NAME.js and NAME.css
PANELS = ("playground", "origin", "ablate", "lens", "attribution", "patch", "side", "vocab", "transform")
STYLES = ("app.css", *(f"{n}.css" for n in PANELS), "cards.css", "tour.css")  # cards.css: save_card.js, present.js


def asset(name: str) -> str:
    return (resources.files("qkv.apps.web") / "static" / name).read_text(encoding="utf-8")
