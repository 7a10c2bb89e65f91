"""The built course site (build/site/html): pages, order, links, players, offline."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # http:, https:, mailto:, data:, ...


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids, self.loads, self.players, self.views = [], set(), [], 0, 0
        self.downloads = []  # hrefs of the download links (a lesson's notebooks)
        self.toc = []  # hrefs of the sidebar's table of contents, in order
        self._toc_depth = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and "href" in attrs:
            self.links.append(attrs["href"])
            if "toctree-l1" in (self._li_class or ""):
                self.toc.append(attrs["href"])
            if "download" in attrs.get("class", "").split():
                self.downloads.append(attrs["href"])
        if tag == "li":
            self._li_class = attrs.get("class", "")
        if tag in ("img", "script") and attrs.get("src"):
            self.loads.append(attrs["src"])
        if tag == "link" and attrs.get("href"):
            self.loads.append(attrs["href"])
        if tag == "div" and "minigrad-player" in attrs.get("class", "").split():
            self.players += 1
        if tag == "script" and attrs.get("type") == "application/vnd.jupyter.widget-view+json":
            self.views += 1

    _li_class = ""


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _lessons() -> list[Path]:
    return sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _readme_rows() -> list[tuple[str, str, str]]:
    """(number, title, notebook stem) of each row of the README's course table."""
    readme = (REPO / "README.md").read_text()
    return re.findall(r"^\| (\d+) \| \[([^\]]+)\]\(notebooks/([^)]+)\.ipynb\)", readme, re.M)


def _stored_figures(outputs: list) -> int:
    """Pictures an output list shows apart from steppers (a stepper's output also
    carries a picture of its frame, which the page's stepper replaces)."""
    return sum("image/png" in o.get("data", {})
               and "application/vnd.jupyter.widget-view+json" not in o.get("data", {})
               for o in outputs)


def _built_without_torch() -> bool:
    built_with = REPO / "build" / "site" / "built-with.json"
    return json.loads(built_with.read_text())["torch"] == "absent"


def test_one_page_per_lesson_in_course_order(site_html):
    index = _parse(site_html / "index.html")
    lessons = [p.stem + ".html" for p in _lessons()]
    assert len(lessons) == len(_readme_rows()) >= 11
    assert index.toc == ["#", *lessons, "instructor.html"]  # the landing page itself first
    for name in lessons:
        assert (site_html / name).is_file()


def test_the_landing_page_is_the_readmes_course_table(site_html):
    rows = _readme_rows()
    assert [stem for _, _, stem in rows] == [p.stem for p in _lessons()]
    text = (site_html / "index.html").read_text()
    for number, title, stem in rows:
        links = re.findall(rf'<a class="reference internal" href="{stem}\.html">(.*?)</a>',
                           text, re.S)
        texts = [re.sub(r"<[^>]+>", "", link).strip() for link in links]
        assert title.replace("`", "") in texts, f"lesson {number}'s row is not on the page"
    assert 'href="instructor.html"' in text


def test_the_landing_page_is_for_a_reader(site_html):
    """It says what the course teaches and how to run a lesson (make lab, Colab), and
    none of the maintainers' commands."""
    text = (site_html / "index.html").read_text()
    article = text.split('<article class="bd-article">')[1].split("</article>")[0]
    body = html.unescape(re.sub(r"<[^>]+>", "", article))
    readme = (REPO / "README.md").read_text()
    opening = " ".join(readme.split("\n\n")[1].split()[:5])  # "A Jupyter course that makes"
    assert opening in " ".join(body.split())
    assert "make lab" in body and "notebooks/learner/" in body
    colab = re.search(r"^To run a lesson in Colab:.*?(?=\n\n)", readme, re.M | re.S).group(0)
    install = re.search(r"!pip install [^`]+", colab).group(0)
    assert install in body  # the README's Colab steps
    for maintainer in (".venv/bin/python", "scripts/", "make test", "make site", "nbval"):
        assert maintainer not in body, maintainer
    assert 'id="run-a-lesson-yourself"' in text


def test_every_lesson_page_links_to_its_notebooks(site_html):
    """A download of the exercise notebook (notebooks/learner/) and of the solved one,
    each the repository's file as it is."""
    for lesson in _lessons():
        page = _parse(site_html / f"{lesson.stem}.html")
        assert len(page.downloads) == 2, lesson.name
        files = [site_html / unquote(href) for href in page.downloads]
        assert [f.name for f in files] == [lesson.name] * 2
        assert files[0].read_bytes() == (REPO / "notebooks" / "learner" / lesson.name).read_bytes()
        assert files[1].read_bytes() == lesson.read_bytes()
        assert "index.html#run-a-lesson-yourself" in page.links


def test_every_internal_link_and_anchor_resolves(site_html):
    pages = {p: _parse(p) for p in site_html.glob("*.html")}
    checked = 0
    for path, page in pages.items():
        for href in page.links:
            if EXTERNAL.match(href):
                continue
            parts = urlsplit(href)
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            assert target.exists(), f"{path.name}: broken link {href}"
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                assert parts.fragment in ids, f"{path.name}: no anchor for {href}"
            checked += 1
    assert checked > 100
    # the lessons' own "Next:" links became links between pages
    start = (site_html / "00_start_here.html").read_text()
    assert 'href="01_backward_graph.html"' in start


def test_nothing_is_loaded_from_the_network_and_every_local_file_exists(site_html):
    for path in site_html.glob("*.html"):
        for src in _parse(path).loads:
            if src.startswith("data:"):
                continue
            assert not EXTERNAL.match(src) and not src.startswith("//"), (path.name, src)
            assert (path.parent / unquote(urlsplit(src).path)).exists(), (path.name, src)
        text = path.read_text()
        assert "require.js" not in text and "cdn." not in text
        # the only widgets are the players: no other widget output that would need a
        # widget manager from a CDN
        page = _parse(path)
        assert page.views == page.players, path.name


def test_every_stepper_is_a_player_and_graphs_are_images(site_html):
    for lesson in _lessons():
        nb = json.loads(lesson.read_text())
        steppers = sum(
            any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                for o in c.get("outputs", []))
            for c in nb["cells"]
        )
        pngs = _stored_figures([o for c in nb["cells"] for o in c.get("outputs", [])])
        page = site_html / f"{lesson.stem}.html"
        parsed = _parse(page)
        if _built_without_torch():
            stills = page.read_text(encoding="utf-8").count('class="still-stepper"')
            assert parsed.players + stills == steppers, lesson.name
        else:
            assert parsed.players == steppers, lesson.name
        images = [s for s in parsed.loads if s.startswith("_images/")]
        assert len(images) >= pngs, f"{lesson.name}: stored figures missing on the page"
    players = sum(_parse(site_html / f"{p.stem}.html").players for p in _lessons())
    assert players >= 10  # (every scenario lesson steps through at least one backward)


def test_search_index_and_guide(site_html):
    assert (site_html / "search.html").is_file()
    index = (site_html / "searchindex.js").read_text()
    for word in ("accumulategrad", "retain_graph", "instructor"):
        assert word in index.lower()
    guide = (site_html / "instructor.html").read_text()
    assert "Instructor guide" in guide


def test_a_build_is_stale_when_an_input_is_newer(site_builder, site_html, tmp_path, monkeypatch):
    inputs = site_builder.inputs()
    for needed in ("notebooks/04_inplace_versions.ipynb", "README.md", "docs/instructor.md",
                   "notebooks/learner/04_inplace_versions.ipynb", "docs/site/landing.md",
                   "widgets/player.py", "widgets/web/stepper.js", "minigrad/tensor.py",
                   "docs/site/conf.py"):
        assert REPO / needed in inputs
    assert not site_builder.is_stale()
    built = (site_html / "index.html").stat().st_mtime
    newer = tmp_path / "edited.ipynb"
    newer.write_text("{}")
    import os

    os.utime(newer, (built + 5, built + 5))
    monkeypatch.setattr(site_builder, "inputs", lambda: [*inputs, newer])
    assert site_builder.is_stale()


def test_the_players_cache_is_keyed_on_the_steppers_browser_code(site_builder):
    """A player embeds the stepper's ES module and CSS and the loader: a change to any of
    them exports the players again, as a change to the Python does."""
    sources = {str(p.relative_to(REPO)) for p in site_builder.player_sources()}
    for needed in ("widgets/web/stepper.js", "widgets/web/stepper.css", "widgets/web/embed.js",
                   "widgets/stepper.py", "widgets/player.py", "minigrad/tensor.py"):
        assert needed in sources


def test_a_build_is_stale_when_pytorch_came_or_went(site_builder, site_html, monkeypatch):
    """Installing PyTorch after a build without it (or removing it) builds the site again,
    and its steppers are captured anew: the players' cache is keyed on it too."""
    assert not site_builder.is_stale()
    with_torch = site_builder._source_digest()
    other = "absent" if site_builder.torch_version() != "absent" else "2.13.0"
    monkeypatch.setattr(site_builder, "torch_version", lambda: other)
    assert site_builder.is_stale()
    assert site_builder._source_digest() != with_torch


def _lesson_with_a_torch_stepper(site_builder) -> tuple[Path, int]:
    for lesson in site_builder.lessons():
        nb = json.loads(lesson.read_text())
        for i in site_builder.stepper_cells(nb):
            if site_builder._steps_real_torch(nb["cells"][i]):
                return lesson, i
    raise AssertionError("no lesson steps through real PyTorch")


def test_without_pytorch_its_stepper_is_a_still_picture(site_builder, tmp_path, monkeypatch):
    """Built where PyTorch is absent, a real-PyTorch stepper (which its lesson skips) shows
    its stored picture, labelled as a still; where PyTorch is present, a stepper that was
    not captured stops the build."""
    lesson, cell = _lesson_with_a_torch_stepper(site_builder)
    nb = json.loads(lesson.read_text())
    captured = {str(i): "player.html" for i in site_builder.stepper_cells(nb)
                if not site_builder._steps_real_torch(nb["cells"][i])}
    (tmp_path / "player.html").write_text("<div>a captured minigrad stepper</div>")
    (tmp_path / "index.json").write_text(json.dumps({"cells": captured}))
    monkeypatch.setattr(site_builder, "torch_version", lambda: "absent")
    page = site_builder.lesson_page(lesson, tmp_path)
    shown = [o["data"] for o in page["cells"][cell]["outputs"] if "data" in o]
    assert len(shown) == 1
    data = shown[0]
    assert set(data) == {"text/html", "text/plain"}
    assert 'class="still-stepper"' in data["text/html"]
    assert 'src="data:image/png;base64,iVBOR' in data["text/html"]  # the stored PNG
    monkeypatch.setattr(site_builder, "torch_version", lambda: "2.13.0")
    with pytest.raises(SystemExit, match="not captured"):
        site_builder.lesson_page(lesson, tmp_path)
