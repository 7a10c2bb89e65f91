"""Where numba keeps minigrad's compiled kernels, how a read-only install's users get
them, and a lock on numba's cache saves. (The one line a first compile prints, and the
helper compiling a lesson's kernels ahead, are in `ahead`.)

numba compiles a kernel the first time it runs with a new dtype and keeps the machine
code on disk (`cache=True`), looked up in this order:

1. `NUMBA_CACHE_DIR`, when set;
2. `minigrad/kernels/__pycache__/`, when that folder is writable (an install of one's
   own: a clone, a virtual environment);
3. otherwise (a read-only install: a hub's shared environment, a system-wide one) a
   per-user folder, `~/.cache/numba/kernels_<hash of the folder>/`.

In the third case every new user would compile again. So an image builder runs
`python -m minigrad.warmup` as the install's owner: the kernels land in
`minigrad/kernels/__pycache__/`, and `seed_user_cache()` (called at `import minigrad`)
copies them once into the user's folder, where numba finds them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

KERNELS = Path(__file__).resolve().parent
PREBUILT = KERNELS / "__pycache__"


def user_cache_dir() -> Path:
    """numba's per-user folder for the kernels of this install (case 3 above)."""
    from numba.core.caching import UserWideCacheLocator

    subpath = UserWideCacheLocator.get_suitable_cache_subpath(str(KERNELS / "elementwise.py"))
    from numba.misc.appdirs import AppDirs

    return Path(AppDirs(appname="numba", appauthor=False).user_cache_dir) / subpath


def cache_dir() -> Path:
    """Where numba reads and writes minigrad's kernels in this process."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        from numba.core.caching import UserProvidedCacheLocator

        subpath = UserProvidedCacheLocator.get_suitable_cache_subpath(
            str(KERNELS / "elementwise.py"))
        return Path(os.environ["NUMBA_CACHE_DIR"]) / subpath
    if os.access(KERNELS, os.W_OK) and (not PREBUILT.exists() or os.access(PREBUILT, os.W_OK)):
        return PREBUILT
    return user_cache_dir()


def seed_user_cache() -> int:
    """On a read-only install whose kernels were compiled ahead (`PREBUILT` holds
    them), copy them into the user's numba folder once; returns how many files were
    copied. Cheap when there is nothing to do (one or two `stat`s)."""
    if os.environ.get("NUMBA_CACHE_DIR") or not PREBUILT.is_dir():
        return 0
    if os.access(PREBUILT, os.W_OK):  # numba reads and writes them where they are
        return 0
    target = user_cache_dir()
    stamp = f".seeded-{PREBUILT.stat().st_mtime_ns}"
    if (target / stamp).exists():
        return 0
    try:
        target.mkdir(parents=True, exist_ok=True)
        copied = 0
        for f in PREBUILT.iterdir():
            if f.suffix in (".nbi", ".nbc") and not (target / f.name).exists():
                shutil.copy2(f, target / f.name)
                copied += 1
        (target / stamp).touch()
    except OSError:  # (no home folder, a full disk: numba will compile as usual)
        return 0
    return copied


def serialise_cache_writes() -> None:
    """numba's cache takes no lock: a save reads a kernel's index, writes the data file
    it names after the index's length, then writes the index. Two processes saving two
    signatures of one kernel at once (a lesson and its helper, see `ahead`) could give
    both the same data file. So saves take an exclusive lock on a file beside the
    cache's, one process at a time."""
    try:
        import fcntl
    except ImportError:  # (not a POSIX system: no helper process is started either)
        return
    from numba.core.caching import Cache

    save = Cache.save_overload
    if getattr(save, "serialised", False):
        return

    def save_overload(self, sig, data):
        try:
            lock = open(os.path.join(self.cache_path, ".minigrad-save.lock"), "a")
        except OSError:  # (a folder we cannot write: numba's own save will say so)
            return save(self, sig, data)
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            return save(self, sig, data)

    save_overload.serialised = True
    Cache.save_overload = save_overload
