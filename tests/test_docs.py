"""The front pages and the guide: README.md and README.zh.md stay short, every relative link in them and
in docs/ reaches a file (and a heading, when it names one), and the guide builds as a site with
`mkdocs build --strict`, offline, with every page in the nav and nothing fetched from elsewhere.

Each check is also shown failing: on a temporary copy with a broken link, a missing heading, a page left
out of the nav, or a front page grown too long.
"""

from __future__ import annotations

import re
import shutil
import socket
from html.parser import HTMLParser
from pathlib import Path

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import Abort
from pymdownx.slugs import slugify

ROOT = Path(__file__).resolve().parents[1]
FRONT_PAGES = ("README.md", "README.zh.md")
MAX_LINES = 300
SLUG = slugify(case="lower")  # the slug mkdocs.yml gives headings; GitHub's, for the headings qkv writes

FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.M)
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)


def markdown_files(root: Path) -> list[Path]:
    """The front pages and every page of the guide."""
    return [root / name for name in FRONT_PAGES] + sorted((root / "docs").rglob("*.md"))


def prose(text: str) -> str:
    """The text without code: links written inside code blocks or spans are examples, not links."""
    return CODE.sub("", FENCE.sub("", text))


def anchors(page: Path) -> set[str]:
    """The ids of a page's headings, as the guide's site and GitHub make them."""
    titles = HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8")))
    return {SLUG(re.sub(r"\[([^\]]*)\]\([^)]*\)|[*_`]", r"\1", title), "-") for title in titles}


def broken_links(root: Path) -> list[str]:
    """Every relative link of the front pages and the guide that reaches no file, or no heading in it."""
    broken = []
    for page in markdown_files(root):
        for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
            if EXTERNAL.match(target):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(root)}: {target}"
            if not file.is_file():
                broken.append(f"{where} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                broken.append(f"{where} (no such heading)")
    return broken


def too_long(root: Path) -> list[str]:
    """The front pages longer than MAX_LINES."""
    lengths = {name: len((root / name).read_text(encoding="utf-8").splitlines()) for name in FRONT_PAGES}
    return [f"{name}: {n} lines" for name, n in lengths.items() if n > MAX_LINES]


def copy_sources(dest: Path) -> Path:
    """A copy of what the links and the site are made of, to break on purpose."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in (*FRONT_PAGES, "mkdocs.yml"):
        shutil.copy(ROOT / name, dest / name)
    shutil.copytree(ROOT / "docs", dest / "docs")
    return dest


def test_front_pages_are_at_most_300_lines():
    assert too_long(ROOT) == []


def test_a_long_front_page_is_found(tmp_path):
    root = copy_sources(tmp_path)
    (root / "README.zh.md").write_text("行\n" * (MAX_LINES + 1), encoding="utf-8")
    assert too_long(root) == [f"README.zh.md: {MAX_LINES + 1} lines"]


def test_every_relative_link_reaches_a_file_and_heading():
    assert broken_links(ROOT) == []


def test_links_are_read_where_the_guide_has_them():
    """The checker sees the links it should: without these, an empty result above would prove nothing."""
    readme = LINK.findall(prose((ROOT / "README.md").read_text(encoding="utf-8")))
    assert "docs/img/explorer.png" in readme and "docs/cli.md" in readme
    assert "the-fast-recipe-babys-quality-in-under-half-its-time" in anchors(ROOT / "docs" / "recipe.md")


def test_a_broken_link_or_heading_is_found(tmp_path):
    root = copy_sources(tmp_path)
    with open(root / "README.md", "a", encoding="utf-8") as f:
        f.write("\n[gone](docs/no-such-page.md) [nowhere](docs/cli.md#no-such-heading) `[code](not-a-link.md)`\n")
    with open(root / "docs" / "zh" / "index.md", "a", encoding="utf-8") as f:
        recipe = "../recipe.md#the-fast-recipe-babys-quality-in-under-half-its-time"  # a heading that is there
        f.write(f"\n![图](../img/no-such-picture.png) [有]({recipe})\n")
    assert broken_links(root) == [
        "README.md: docs/no-such-page.md (no such file)",
        "README.md: docs/cli.md#no-such-heading (no such heading)",
        "docs/zh/index.md: ../img/no-such-picture.png (no such file)",
    ]


@pytest.fixture
def offline(monkeypatch):
    """No connection can be opened while the site builds: it must need none."""

    def refuse(*args, **kwargs):
        raise OSError("the guide must build offline")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")


def build_site(root: Path, out: Path) -> Path:
    """`mkdocs build --strict` of root/mkdocs.yml into out; raises Abort on any warning."""
    build(load_config(config_file=str(root / "mkdocs.yml"), site_dir=str(out), strict=True))
    return out


class Fetches(HTMLParser):
    """Every URL outside the site that a page would load by itself (not a link someone clicks)."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            loads = name in ("src", "srcset", "data", "poster") or (name == "href" and tag != "a")
            if loads and value and EXTERNAL.match(value) and not value.startswith(("data:", "#")):
                self.urls.append(f"<{tag} {name}={value}>")


def test_a_page_that_loads_from_elsewhere_is_found():
    fetches = Fetches()
    fetches.feed(
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto"><script src="//cdn.example/x.js">'
        '</script><img src="img/hull.png"><a href="https://pypi.org/project/x/">a link in the text</a>'
    )
    assert fetches.urls == [
        "<link href=https://fonts.googleapis.com/css?family=Roboto>",
        "<script src=//cdn.example/x.js>",
    ]


@pytest.mark.slow
def test_the_guide_builds_strictly_offline_and_loads_nothing_from_elsewhere(tmp_path, offline):
    site = build_site(ROOT, tmp_path / "site")
    pages = sorted(site.rglob("*.html"))
    assert {"index.html", "cli.html", "benchmarks.html", "zh/index.html"} <= {
        p.relative_to(site).as_posix() for p in pages
    }
    fetches = Fetches()
    for page in pages:
        fetches.feed(page.read_text(encoding="utf-8"))
    assert fetches.urls == []
    assert not [p for p in site.rglob("*") if p.is_file() and b"fonts.googleapis" in p.read_bytes()]
    # the headings' ids the link check expects are the ones the site has
    for md in sorted((ROOT / "docs").rglob("*.md")):
        html = (site / md.relative_to(ROOT / "docs").with_suffix(".html")).read_text(encoding="utf-8")
        assert anchors(md) <= set(re.findall(r'<h[1-6] id="([^"]+)"', html)), md


@pytest.mark.slow
@pytest.mark.parametrize(
    "page, text, said",
    [
        ("docs/cli.md", "\n[gone](no-such-page.md)\n", "no-such-page.md"),  # a link to no page
        ("docs/zh/cli.md", "\n[无](../api.md#no-such-heading)\n", "#no-such-heading"),  # a link to no heading
        ("docs/orphan.md", "# A page missing from the nav\n", "orphan.md"),  # a page the nav leaves out
    ],
)
def test_the_build_fails_on_a_broken_link_or_a_page_outside_the_nav(tmp_path, offline, caplog, page, text, said):
    root = copy_sources(tmp_path / "src")
    with open(root / page, "a", encoding="utf-8") as f:
        f.write(text)
    with pytest.raises(Abort, match="strict mode"):
        build_site(root, tmp_path / "site")
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and said in warnings[0], warnings
