"""Build the static course site: `python docs/site/build.py` (what `make site` runs).

Everything is built offline, from what the repository stores:

1. **Players.** A `BackwardStepper` output in a stored notebook is a live widget whose
   state the notebook does not keep. For each lesson that shows one, the cells up to its
   last stepper run in a fresh kernel with `widgets.player.capture_steppers()` switched
   on; every stepper the notebook displays is exported as the stepper widget itself, its
   state embedded with the offline loader (`widgets.player.stepper_html`): on the page it
   draws its graph and steps through backward in the browser, as in JupyterLab. The
   players are cached under build/site/players/, keyed by the cells' code, the source of
   minigrad and widgets and the PyTorch installed, so only a change there runs a lesson
   again.
2. **Sources** (build/site/src/): each lesson's stored notebook with its stepper outputs
   replaced by the players (every other output as stored) and a box linking to the
   lesson's notebooks (copied beside it: the exercise one and the solved one), the
   landing page (docs/site/landing.md, with the README's lesson table and Colab
   steps), and the instructor guide (docs/instructor.md).
3. **HTML** (build/site/html/): Sphinx with myst-nb and sphinx-book-theme, notebooks not
   executed (docs/site/conf.py), warnings treated as errors so a broken cross-link fails
   the build.

Nothing is done when the build is newer than everything it is made from and was made
with the same PyTorch (`--force` builds anyway); `--jobs N` runs N lessons at once
(default 2). The site builds without PyTorch too: a stepper of real PyTorch then shows as
the still picture stored with the notebook, and the build says so in one line.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
NOTEBOOKS = REPO / "notebooks"
OUT = REPO / "build" / "site"
SRC, HTML, PLAYERS = OUT / "src", OUT / "html", OUT / "players"

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MARKER = re.compile(r"minigrad-stepper-capture:(\d+)")
LESSON_GLOB = "[0-9][0-9]_*.ipynb"
KERNEL_TIMEOUT_S = 600
GUIDE = REPO / "docs" / "instructor.md"
LANDING = HERE / "landing.md"


def lessons() -> list[Path]:
    """The course's lessons, in course order (their file names start with the number)."""
    return sorted(NOTEBOOKS.glob(LESSON_GLOB))


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def stepper_cells(nb: dict) -> list[int]:
    """Indices of the code cells whose stored output is a stepper (a live widget)."""
    return [
        i for i, cell in enumerate(nb["cells"])
        if cell["cell_type"] == "code"
        and any(WIDGET_VIEW in out.get("data", {}) and _shows_a_stepper(cell, out)
                for out in cell.get("outputs", []))
    ]


def _shows_a_stepper(cell: dict, out: dict) -> bool:
    """Whether a widget output is a stepper's: made in that cell, or one made earlier
    and shown again (`stepper.first()` then `stepper`), whose text form names it."""
    text = "".join(out.get("data", {}).get("text/plain", ""))
    return "BackwardStepper" in "".join(cell["source"]) or text.startswith("BackwardStepper")


# --------------------------------------------------------------------------- players


def torch_version() -> str:
    """The PyTorch the lessons' kernels will import ("absent" when there is none): the
    lessons' real-PyTorch steppers are captured only when it is there."""
    if importlib.util.find_spec("torch") is None:
        return "absent"
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def player_sources() -> list[Path]:
    """The code a player is made from: the library, and the widgets with their browser
    side (a player embeds the stepper's ES module, its CSS and the loader)."""
    return sorted(path for folder in ("minigrad", "widgets")
                  for path in (REPO / folder).rglob("*")
                  if path.suffix in (".py", ".js", ".css") and path.is_file())


def _source_digest() -> str:
    """What a player depends on besides the lesson itself: its code (`player_sources`)
    and whether PyTorch is there."""
    digest = hashlib.sha256(f"torch={torch_version()}\0".encode())
    for path in player_sources():
        digest.update(str(path.relative_to(REPO)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _player_key(nb: dict, last: int, sources: str) -> str:
    digest = hashlib.sha256(sources.encode())
    for cell in nb["cells"][: last + 1]:
        if cell["cell_type"] == "code":
            digest.update("".join(cell["source"]).encode() + b"\0")
    return digest.hexdigest()[:16]


def export_players(lesson: Path, folder: Path) -> dict:
    """Run `lesson` up to its last stepper in a fresh kernel, capturing the steppers, and
    write their players into `folder`; return {stored cell index: player file}."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(lesson, as_version=4)
    last = max(stepper_cells(read(lesson)))
    setup = nbformat.v4.new_code_cell(
        "from widgets.player import capture_steppers\ncapture_steppers()"
    )
    export = nbformat.v4.new_code_cell(
        "from widgets.player import export_captured\n"
        f"export_captured({str(folder)!r})"
    )
    nb.cells = [setup, *nb.cells[: last + 1], export]
    folder.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    NotebookClient(
        nb, timeout=KERNEL_TIMEOUT_S, kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    ).execute()
    where = {}
    for i, cell in enumerate(nb.cells[1:-1]):
        for out in cell.get("outputs", []):
            found = MARKER.search(str(out.get("data", {}).get("text/html", "")))
            if found:
                where[str(i)] = f"{found.group(1)}.html"
    report = json.loads((folder / "report.json").read_text())
    index = {"cells": where, "seconds": round(time.perf_counter() - began, 2), "players": report}
    (folder / "index.json").write_text(json.dumps(index, indent=1), encoding="utf-8")
    return index


def players_for(lesson: Path, sources: str) -> Path | None:
    """The cached players folder of `lesson` (None if it shows no stepper)."""
    nb = read(lesson)
    cells = stepper_cells(nb)
    if not cells:
        return None
    return PLAYERS / lesson.stem / _player_key(nb, max(cells), sources)


def build_players(jobs: int) -> dict[str, Path]:
    """Export the players of every lesson that needs it (cached), `jobs` lessons at once."""
    sources = _source_digest()
    wanted = {p.stem: players_for(p, sources) for p in lessons()}
    wanted = {stem: folder for stem, folder in wanted.items() if folder is not None}
    missing = [s for s, f in wanted.items() if not (f / "index.json").exists()]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")])
    ))
    env.pop("MPLBACKEND", None)

    def run(stem: str) -> tuple[str, subprocess.CompletedProcess]:
        folder = wanted[stem]
        if folder.parent.exists():
            shutil.rmtree(folder.parent)  # older players of this lesson
        cmd = [sys.executable, __file__, "--export", str(NOTEBOOKS / f"{stem}.ipynb"),
               str(folder)]
        return stem, subprocess.run(cmd, env=env, capture_output=True, text=True)

    if missing:
        print(f"site: exporting steppers of {len(missing)} lesson(s): {', '.join(missing)}")
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
            for stem, done in pool.map(run, missing):
                if done.returncode != 0:
                    raise SystemExit(f"site: running {stem} failed:\n{done.stdout}{done.stderr}")
                print(f"  {stem}: {done.stdout.strip()}")
    return wanted


# --------------------------------------------------------------------------- sources


def lesson_page(lesson: Path, players: Path | None) -> dict:
    """The stored notebook, with each stepper output replaced by its player."""
    nb = read(lesson)
    nb["metadata"].pop("widgets", None)  # saved widget state: nothing can use it here
    if players is None:
        return nb
    index = json.loads((players / "index.json").read_text())
    for i in stepper_cells(nb):
        name = index["cells"].get(str(i))
        if name is None and torch_version() == "absent" and _steps_real_torch(nb["cells"][i]):
            _keep_still_picture(nb["cells"][i])
            continue
        if name is None:
            raise SystemExit(f"site: {lesson.name} cell {i} shows a stepper that was not captured")
        player = (players / name).read_text(encoding="utf-8")
        cell = nb["cells"][i]
        for out in cell["outputs"]:
            if WIDGET_VIEW in out.get("data", {}):
                out["data"] = {"text/html": player, "text/plain": "BackwardStepper"}
                out.get("metadata", {}).pop(WIDGET_VIEW, None)
    return nb


def _steps_real_torch(cell: dict) -> bool:
    """Whether the cell steps through real PyTorch (it then runs only where torch is)."""
    return "real_torch" in "".join(cell["source"])


def _keep_still_picture(cell: dict) -> None:
    """A stepper that could not be captured: its stored still picture, said to be one."""
    for out in cell["outputs"]:
        data = out.get("data", {})
        if WIDGET_VIEW in data and "image/png" in data:
            out["data"] = {
                "text/html": (
                    '<p class="still-stepper"><em>A still picture of this stepper: the site '
                    "was built without PyTorch, which it steps through.</em></p>"
                    f'<img alt="BackwardStepper" src="data:image/png;base64,'
                    f'{"".join(data["image/png"]).strip()}">'
                ),
                "text/plain": "BackwardStepper",
            }
            out.get("metadata", {}).pop(WIDGET_VIEW, None)


def _site_links(markdown: str) -> str:
    """Repository-relative links as they are on the site, where every lesson and the
    guide are pages side by side."""
    markdown = re.sub(r"\]\((?:\.\./)?notebooks/([^)]+\.ipynb)\)", r"](\1)", markdown)
    markdown = re.sub(r"\]\((?:\.\./)?README\.md\)", "](index.md)", markdown)
    markdown = re.sub(r"\]\((?:docs/)?instructor\.md\)", "](instructor.md)", markdown)
    return re.sub(r"\]\((?:\.\./)?docs/images/", "](images/", markdown)


def _readme_part(readme: str, starts: str, what: str) -> str:
    """The README's block (lines up to the next blank line) whose first line starts with
    `starts`: the build stops with a clear message when the README has none."""
    found = re.search(rf"^{re.escape(starts)}.*?(?=\n\n|\Z)", readme, re.M | re.S)
    if found is None:
        raise SystemExit(f"site: the README has no {what} (a block starting {starts!r})")
    return found.group(0)


def landing_page(readme: str) -> str:
    """docs/site/landing.md with the README's opening paragraph, lesson table and Colab
    steps put in, and the table of contents (lessons in course order, then the guide)."""
    parts = {
        "opening": readme.split("\n\n")[1],
        "lessons": _readme_part(readme, "| # | lesson |", "lesson table"),
        "colab": _readme_part(readme, "To run a lesson in Colab:", "Colab steps"),
        "toc": "\n".join(p.stem for p in lessons()),
    }
    page = LANDING.read_text(encoding="utf-8")
    for name, text in parts.items():
        page = page.replace(f"@{name}@", text)
    return _site_links(page)


# Where a lesson page links to its notebooks: copies of the repository's files, beside
# the page sources (SRC), in the repository's own layout.
NOTEBOOK_COPIES = {
    "exercise notebook": "notebooks/learner/{name}",
    "solved notebook": "notebooks/{name}",
}


def notebook_links(lesson: Path) -> dict:
    """A markdown cell linking to the lesson's notebooks (each a download of the copy
    `write_sources` puts in the site) and to how to run them."""
    exercise, solved = (f"/{where.format(name=lesson.name)}" for where in NOTEBOOK_COPIES.values())
    text = (
        ":::{admonition} Run this lesson yourself\n:class: tip\n\n"
        f"Download the {{download}}`exercise notebook <{exercise}>` (solutions removed, "
        "yours to fill in) or the {download}"
        f"`solved notebook <{solved}>` (this page), and open it with `make lab` in the "
        "course folder or in Google Colab: see "
        "[Run a lesson yourself](index.md#run-a-lesson-yourself).\n:::\n"
    )
    return {"cell_type": "markdown", "id": "run-this-lesson", "metadata": {}, "source": text}


def write_sources(players: dict[str, Path]) -> None:
    if SRC.exists():
        shutil.rmtree(SRC)
    SRC.mkdir(parents=True)
    for lesson in lessons():
        page = lesson_page(lesson, players.get(lesson.stem))
        page["cells"].insert(1, notebook_links(lesson))  # after the lesson's title
        (SRC / lesson.name).write_text(json.dumps(page, indent=1), encoding="utf-8")
        for where in NOTEBOOK_COPIES.values():
            copy = SRC / where.format(name=lesson.name)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / where.format(name=lesson.name), copy)
    (SRC / "index.md").write_text(
        landing_page((REPO / "README.md").read_text(encoding="utf-8")), encoding="utf-8"
    )
    (SRC / "instructor.md").write_text(_site_links(GUIDE.read_text(encoding="utf-8")),
                                       encoding="utf-8")
    images = REPO / "docs" / "images"
    if images.is_dir():
        shutil.copytree(images, SRC / "images")


def build_html(jobs: int) -> None:
    if HTML.exists():
        shutil.rmtree(HTML)
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going",
           "-j", str(max(jobs, 1)), "-c", str(HERE), str(SRC), str(HTML)]
    done = subprocess.run(cmd, cwd=OUT)
    if done.returncode != 0:
        raise SystemExit(f"site: sphinx failed (exit {done.returncode})")


def inputs() -> list[Path]:
    """The files a site build is made from (for a cheap "is the build stale?" check)."""
    found = [*lessons(), *(NOTEBOOKS / "learner").glob(LESSON_GLOB), REPO / "README.md",
             GUIDE, *HERE.glob("*")]
    found += player_sources()
    found += [*(REPO / "docs" / "images").glob("*")]
    return [p for p in found if p.is_file()]


BUILT_WITH = OUT / "built-with.json"


def built_with() -> dict[str, str]:
    """What a build depends on that is not a file of the repository."""
    return {"torch": torch_version()}


def is_stale() -> bool:
    """True when build/site/html is missing, older than one of its inputs, or was built
    with another PyTorch (or none)."""
    index = HTML / "index.html"
    if not index.exists() or not BUILT_WITH.exists():
        return True
    if json.loads(BUILT_WITH.read_text()) != built_with():
        return True
    built = index.stat().st_mtime
    return any(p.stat().st_mtime > built for p in inputs())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--force", action="store_true", help="build even when up to date")
    parser.add_argument("--export", nargs=2, metavar=("LESSON", "FOLDER"),
                        help=argparse.SUPPRESS)  # one lesson's players (run by the build)
    args = parser.parse_args(argv)
    if args.export:
        index = export_players(Path(args.export[0]), Path(args.export[1]))
        steps = sum(p["steps"] for p in index["players"])
        kib = sum(p["bytes"] for p in index["players"]) / 1024
        print(f"{len(index['players'])} stepper(s), {steps} steps, {kib:.0f} KiB, "
              f"{index['seconds']} s")
        return 0
    if not args.force and not is_stale():
        print(f"site: up to date ({HTML / 'index.html'})")
        return 0
    began = time.perf_counter()
    if torch_version() == "absent":
        print("site: PyTorch is not installed: its steppers show as still pictures "
              "(pip install torch==2.13.0 makes them step)")
    players = build_players(args.jobs)
    write_sources(players)
    build_html(args.jobs)
    BUILT_WITH.write_text(json.dumps(built_with()), encoding="utf-8")
    print(f"site: {HTML / 'index.html'} ({time.perf_counter() - began:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
