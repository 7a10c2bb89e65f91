"""Compiling a lesson's kernels ahead, on the other core.

A fresh runtime (Colab, Binder, a new hub user) starts with an empty numba cache, so a
lesson waits for each kernel the first time it runs it: a few seconds in all, spread
over the lesson. So in a Jupyter kernel minigrad starts one helper process, at low
priority, that compiles the lesson's kernels into the same cache, last-used first
(`course_kernels.json` lists each lesson's, in the order the lesson first calls them;
`scripts/record_course_kernels.py` records it). The lesson compiles from its start and
the helper from its end, and each loads from the cache what the other has done, so on
two cores the lesson waits for about half of them.

The helper starts at `import minigrad` in a notebook named as a lesson
(`03_retain_graph.ipynb`) whose kernels are not all in the cache (they are after `make
lab`'s warm-up, in a hub's seeded cache, or after a helper finished); or, where the
front end does not tell the kernel the notebook's name (Colab), in a lesson's first
cell, recognised by its code; elsewhere in a Jupyter kernel, at minigrad's first
compile, with every lesson's kernels. Nothing starts outside a
Jupyter kernel (scripts and tests) or with `MINIGRAD_COMPILE_AHEAD=off`. The kernels
are the ones the lesson would have compiled: the helper asks numba to compile the same
signatures.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from importlib import import_module
from pathlib import Path

from . import cache

COURSE_KERNELS = Path(__file__).with_name("course_kernels.json")

_ARRAY = re.compile(r"(readonly )?array\((\w+), (\d+)d, ([CFA])\)")

# A kernel this machine runs in place of the one recorded (on a machine whose PyTorch
# kernels fuse a * b + c): recorded name -> this machine's, filled by the ops that choose
# (`ops.unary`: tanh's backward rounds twice under PyTorch's portable kernels).
HOST_CHOICE: dict[str, str] = {}

_started = False  # (asked once per process)
_running = False  # (and started)


def enabled() -> bool:
    """Whether the helper may start here: in a Jupyter kernel on a POSIX system (where
    cache saves take a lock: `cache.serialise_cache_writes`), unless
    `MINIGRAD_COMPILE_AHEAD=off`."""
    if os.environ.get("MINIGRAD_COMPILE_AHEAD", "").lower() in ("off", "0", "no"):
        return False
    return os.name == "posix" and "ipykernel" in sys.modules


def argument_type(text: str):
    """The numba type written as numba prints it: `array(float32, 1d, C)`,
    `readonly array(float64, 1d, A)`, `float64`, `int64`, `bool`."""
    from numba import types

    def scalar(name: str):
        return types.boolean if name == "bool" else getattr(types, name)

    array = _ARRAY.fullmatch(text)
    if array:
        readonly, dtype, ndim, layout = array.groups()
        return types.Array(scalar(dtype), int(ndim), layout, readonly=bool(readonly))
    return scalar(text)


def lesson_of_this_notebook() -> str | None:
    """The lesson this kernel runs ("03"), from the notebook's file name: JupyterLab and
    Jupyter Notebook give it to the kernel (`JPY_SESSION_NAME`), VS Code puts it in the
    namespace (`__vsc_ipynb_file__`). Elsewhere (Colab), from the cell running now when
    it is a lesson's first cell, as recorded ("01+05" for two lessons that begin
    alike). None when it is not a lesson, or unknown."""
    name = os.environ.get("JPY_SESSION_NAME", "")
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if not name and shell is not None:
        name = shell.user_ns.get("__vsc_ipynb_file__", "")
    match = re.match(r"(\d\d)_\w+\.ipynb$", Path(name).name)
    if match:
        return match.group(1)
    if name or shell is None or not getattr(shell, "history_manager", None):
        return None
    running = shell.history_manager.input_hist_raw[-1:] or [""]
    first_cells = json.loads(COURSE_KERNELS.read_text()).get("first_cells", {})
    lessons = [n for n, print_ in first_cells.items() if print_ == fingerprint(running[0])]
    return "+".join(sorted(lessons)) or None


def fingerprint(cell: str) -> str:
    """A short digest of a cell's code (surrounding blank space aside)."""
    return hashlib.sha1(cell.strip().encode()).hexdigest()[:16]


def kernels_for(lesson: str | None) -> list[tuple[str, str, tuple[str, ...]]]:
    """(module, kernel, argument types) of `lesson` ("03", or "01+05": both lessons'),
    in the order the helper compiles them: last-used first (the lesson compiles from
    its start). For an unknown lesson, every lesson's, the ones most lessons use first:
    the lesson compiles the first few it needs before the helper is up, and the helper
    then finds those in the cache."""
    recorded = json.loads(COURSE_KERNELS.read_text())["lessons"]
    lessons = (lesson or "").split("+")
    if all(n in recorded for n in lessons):
        return list(reversed(list(dict.fromkeys(
            e for n in lessons for e in _entries(recorded[n])))))
    uses: dict = {}
    for kernels in recorded.values():
        for entry in set(_entries(kernels)):
            uses[entry] = uses.get(entry, 0) + 1
    first_seen = {entry: i for i, entry in enumerate(
        dict.fromkeys(e for kernels in recorded.values() for e in _entries(kernels)))}
    return sorted(uses, key=lambda entry: (-uses[entry], first_seen[entry]))


def _entries(kernels: list) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(module, HOST_CHOICE.get(name, name), tuple(args)) for module, name, args in kernels]


def compile_ahead(lesson: str | None, parent: int | None = None) -> int:
    """Compile `lesson`'s kernels (see `kernels_for`) into the numba cache (each loads
    from the cache instead when it is there); stop early if process `parent` has gone.
    Returns how many were compiled or loaded."""
    done = 0
    for module, name, args in kernels_for(lesson):
        if parent is not None and os.getppid() != parent:
            break
        try:
            kernel = getattr(import_module(module), name)
            kernel.compile(tuple(argument_type(a) for a in args))
        except Exception:  # (a kernel renamed since the list was recorded: the lesson
            continue       # compiles what it needs itself)
        done += 1
    return done


def start(lesson: str | None) -> bool:
    """Start the helper process for `lesson` (None: every lesson), once per process, in a
    Jupyter kernel (see the module's docstring). Returns whether it started."""
    global _started, _running
    if _started or not enabled():
        return False
    _started = True
    env = {**os.environ, "MINIGRAD_COMPILE_AHEAD": "off", "MINIGRAD_COMPILE_NOTICE": "off"}
    command = [sys.executable, "-m", "minigrad.kernels.ahead", lesson or "", str(os.getpid())]
    try:
        helper = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
    except OSError:  # (no process to spare: the lesson compiles as usual)
        return False
    threading.Thread(target=helper.wait, daemon=True).start()  # (reaped when it ends)
    _running = True
    return True


def start_for_this_lesson() -> bool:
    """At `import minigrad`: start the helper for this notebook's lesson, unless its
    kernels are known to be compiled. Returns whether it started."""
    if not enabled():
        return False
    lesson = lesson_of_this_notebook()
    if lesson is None or _done(lesson):
        return False
    return start(lesson)


_first_seen = False


def _first_compile(event) -> None:
    """The first time minigrad compiles a kernel in this process: start compiling the
    lesson's other kernels ahead (`start`), and say so once."""
    global _first_seen
    dispatcher = event.data.get("dispatcher")
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    if _first_seen or not module.startswith("minigrad."):
        return
    _first_seen = True
    helping = start(lesson_of_this_notebook()) or _running  # (or started at import)
    if os.environ.get("MINIGRAD_COMPILE_NOTICE", "").lower() in ("off", "0", "no"):
        return
    also = " (the lesson's others on a second core meanwhile)" if helping else ""
    print("minigrad: compiling kernels for this machine on first use (about 0.2 s "
          f"each, a few seconds a lesson, once{also}: they are cached in "
          f"{cache.cache_dir()}; `python -m minigrad.warmup` compiles them ahead)",
          file=sys.stderr)


def watch_first_compile() -> None:
    """Act on minigrad's first compile in this process (`_first_compile`), seen through
    numba's compile event, which fires only when the cache has no machine code for the
    call."""
    from numba.core import event

    class _FirstCompile(event.Listener):
        def on_start(self, ev) -> None:
            _first_compile(ev)

        def on_end(self, ev) -> None:
            pass

    event.register("numba:compile", _FirstCompile())


def _done(lesson: str | None) -> bool:
    """Whether the cache holds every kernel of `lesson` already (numba names a kernel's
    index file after its module and function: `elementwise.add-26.py311.nbi`), as after
    `make lab`'s warm-up, a hub's seeded cache or a helper that finished: nothing for a
    helper to do. (By kernel, not by signature: a cheap look at one folder.)"""
    try:
        indexed = {p.name.split("-")[0] for p in cache.cache_dir().glob("*.nbi")}
    except OSError:
        return False
    return all(f"{module.rsplit('.', 1)[-1]}.{name}" in indexed
               for module, name, _ in kernels_for(lesson))


def _main(argv: list[str]) -> int:
    os.nice(10)  # (the lesson's own work goes first)
    compile_ahead(argv[0] or None, int(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
