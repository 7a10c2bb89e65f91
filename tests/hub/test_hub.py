"""A class taking the course on a real JupyterHub, graded with the real nbgrader.

The set-up is the instructor guide's ("JupyterHub for a class"): docs/hub/install.sh
installs the course read-only with nbgrader, JupyterHub, nbgitpuller and the idle culler
(from PyPI) and JupyterHub's proxy (from npm), and compiles the course's kernels once;
the hub runs docs/hub/jupyterhub_config.py, with PAM logins for real local accounts that
this test creates (an instructor and five learners, each with a home of their own).
tests/hub/classroom.py then acts the class out through the hub's REST API and the kernel
protocol (see there), and the tests below check what came of it: every grade, the
feedback each learner gets back, what learners can and cannot reach, and that a
learner's first lesson runs on the kernels compiled at install time.

It runs as root only (it adds and removes local accounts); it skips otherwise, and fails
instead under MINIGRAD_REQUIRE_HUB=1. The course's environment is kept in build/hub
between runs and installed again when the course's code or the hub's files change.

Two runs may overlap on one machine (two clones tested at once). Each run names its
accounts with a suffix of its own (mghub-<run>-instructor, mghub-<run>-learner1, ...),
marks them as its own (their comment field names the run's process), and removes exactly
those at the end, passed or failed. Every process a run starts carries the same mark in
its environment (the hub, its proxy, `git daemon`, the class), and the processes those
start are their descendants (the idle culler, the learners' servers and kernels). What a
killed run left (its process is gone) is stopped and removed by the next run: its
processes, its accounts and its folders; SIGTERM and SIGHUP end a run as Ctrl-C does, its
own clean-up running. Ports are chosen under a lock every run takes, held until the
processes given them listen, so two runs never get one port. Runs that share one installed
environment (the same checkout, or /opt/minigrad-hub-test) take turns: it holds the
nbgrader exchange.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import hashlib
import importlib.util
import io
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
HUB_DOCS = ROOT / "docs" / "hub"
LESSON = "00_start_here"
COURSE_ID = "minigrad"
CLASS_TIMEOUT_S = 900
# how long a run waits for another run using the same installed environment
INSTALL_LOCK_S = 2400

# What each learner answers in lesson 0, and what the attacker adds (a learner's own cell).
ALL_RIGHT = {"l0_add_node": "right", "l0_is_leaf": "right", "l0_grad_of_square": "right",
             "l0_vjp": "right", "l0_why_accumulate": "right"}
TWO_WRONG = dict(ALL_RIGHT, l0_is_leaf="wrong", l0_grad_of_square="wrong")
PATCH_GRADE = "import widgets.exercises as _w; _w.grade = lambda *a, **k: None"
CLASS = {  # learner number: (answers, extra cells)
    1: (ALL_RIGHT, []),
    2: (ALL_RIGHT, []),  # works through the lesson but does not hand it in
    3: (TWO_WRONG, []),
    4: ({}, []),  # hands in the lesson untouched
    5: ({}, [PATCH_GRADE]),  # untouched, and tries to make every grade cell pass
}
HANDS_IN = [1, 3, 4, 5]

# -- this run's accounts ----------------------------------------------------------------------

ACCOUNT_PREFIX = "mghub-"
# an account's comment field names the run that made it: its suffix and its process
OWNER_MARK = re.compile(
    r"minigrad hub test (?P<run>[0-9a-f]+) pid (?P<pid>\d+) since (?P<since>\d+)")


def _names(run: str) -> list[str]:
    return [f"{ACCOUNT_PREFIX}{run}-instructor"] + [
        f"{ACCOUNT_PREFIX}{run}-learner{i}" for i in CLASS]


def _account(name: str) -> pwd.struct_passwd | None:
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(name)
    return None


def _new_run() -> str:
    """Six hex digits that no account's name holds yet: this run's accounts."""
    while True:
        run = secrets.token_hex(3)
        if not any(_account(n) for n in _names(run)):
            return run


def _since(pid: int) -> str | None:
    """When process `pid` started (clock ticks after boot; None if it is gone): with the
    pid, it names one process even after the pid is reused."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat_line.rsplit(")", 1)[1].split()[19]


RUN = _new_run()
INSTRUCTOR = f"{ACCOUNT_PREFIX}{RUN}-instructor"
# this run's mark: its accounts' comment field, and a variable in its processes' environment
OWNER = f"minigrad hub test {RUN} pid {os.getpid()} since {_since(os.getpid())}"
RUN_VARIABLE = "MINIGRAD_HUB_TEST_RUN"


def learner_name(number: int) -> str:
    return f"{ACCOUNT_PREFIX}{RUN}-learner{number}"


def _marked(env: dict[str, str]) -> dict[str, str]:
    """`env` for a process this run starts: with the run's mark, which the processes it
    starts with its environment inherit (the hub's proxy does)."""
    return dict(env, **{RUN_VARIABLE: OWNER})


# -- ports ------------------------------------------------------------------------------------

# Every run on this machine chooses its ports holding this lock, and keeps it until the
# processes given them listen: a port is free when chosen, and until it is listened on,
# another run's choice could return it too.
PORTS_LOCK = Path(f"/var/tmp/{ACCOUNT_PREFIX}ports.lock")
PORTS_LOCK_S = 600


@contextlib.contextmanager
def _ports(count: int, lock_file: Path = PORTS_LOCK) -> Iterator[list[int]]:
    """`count` different free ports on the loopback, for processes that listen on them
    within the block (every other run waits for the end of the block to choose its own)."""
    with lock_file.open("a") as lock:
        _take_turn(lock, "the choice of ports", PORTS_LOCK_S)
        probes = [socket.socket() for _ in range(count)]
        try:
            for probe in probes:  # all held at once: no port twice
                probe.bind(("127.0.0.1", 0))
            ports = [probe.getsockname()[1] for probe in probes]
        finally:
            for probe in probes:
                probe.close()
        yield ports


def _listening(port: int) -> set[int]:
    """The processes listening on TCP `port` (whose sockets this process may see)."""
    sockets = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()  # sl, local address:port, remote, state, ... inode
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    sockets.add(f"socket:[{fields[9]}]")
    pids = set()
    for fds in Path("/proc").glob("[0-9]*/fd"):
        with contextlib.suppress(OSError):
            if sockets and any(os.readlink(fd) in sockets for fd in fds.iterdir()):
                pids.add(int(fds.parent.name))
    return pids


def _family(pid: int) -> set[int]:
    """Process `pid` and its descendants."""
    table = _processes()
    family, queue = set(), [pid]
    while queue:
        member = queue.pop()
        family.add(member)
        queue.extend(p for p, (parent, _, _) in table.items() if parent == member)
    return family


def _listen_on(ports: list[int], process: subprocess.Popen, what: str,
               timeout: float = 240, log=lambda: "") -> None:
    """Wait until `process` or processes it started listen on every one of `ports`; fail
    if it ends first, or if another process listens on one of them."""
    deadline = time.monotonic() + timeout
    while True:
        listening = {port: _listening(port) for port in ports}
        ours = _family(process.pid)  # after: a process that listens may have just started
        others = {port: sorted(pids - ours) for port, pids in listening.items() if pids - ours}
        assert not others, f"{what}: other processes listen on its ports: {others}"
        if all(listening.values()):
            return
        assert process.poll() is None, f"{what} ended ({process.returncode}): {log()}"
        assert time.monotonic() < deadline, f"{what} did not listen on {ports}: {log()}"
        time.sleep(0.5)


def _reachable_by_all(path: Path) -> bool:
    return all(p.stat().st_mode & stat.S_IXOTH for p in [path, *path.parents] if p.exists())


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for base in paths:
        files = sorted(base.rglob("*")) if base.is_dir() else [base]
        for f in files:
            if f.is_file() and "__pycache__" not in f.parts:
                h.update(str(f.relative_to(ROOT)).encode() + f.read_bytes())
    return h.hexdigest()[:16]


def _take_turn(lock, what: str, timeout: float) -> None:
    """Hold `lock` (an open file) for this run, waiting while another run holds it."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                pytest.fail(f"another run of the hub test has used {what} for {timeout} s")
            time.sleep(2)


@pytest.fixture(scope="module")
def installed(hub_machine, trash, timings):
    """The course installed for the hub (docs/hub/install.sh), in build/hub: this run's
    while it lasts (another run using the same environment waits for its turn). After
    `trash`: a killed run's install.sh, still running, is stopped first."""
    prefix = ROOT / "build" / "hub"
    if not _reachable_by_all(prefix.parent.parent):
        prefix = Path("/opt/minigrad-hub-test")  # learners must reach the environment
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".in-use").open("w") as lock:  # closing it ends this run's turn
        with timings("waiting for another run"):
            _take_turn(lock, str(prefix), INSTALL_LOCK_S)
        key = _digest([ROOT / "minigrad", ROOT / "widgets", ROOT / "pyproject.toml",
                       HUB_DOCS, ROOT / "setup.py", ROOT / "scripts" / "seal_answers.py",
                       ROOT / "scripts" / "answer_key.json",
                       ROOT / "notebooks" / f"{LESSON}.ipynb"])
        stamp = prefix / f".installed-{key}"
        if not stamp.exists():
            for old in prefix.glob(".installed-*"):
                old.unlink()
            env = _marked(dict(os.environ, PREFIX=str(prefix), EXCHANGE=str(prefix / "exchange"),
                               COURSE_ID=COURSE_ID, PYTHON=hub_machine,
                               WARM_LESSONS=LESSON[:2]))
            with timings("install.sh"):
                done = subprocess.run(["bash", str(HUB_DOCS / "install.sh")], env=env,
                                      capture_output=True, text=True, timeout=1800)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            stamp.touch()
        yield prefix


class _Timings:
    """Seconds of the set-up and tear-down steps, printed at the end (-s shows them)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, step: str):
        start = time.monotonic()
        try:
            yield
        finally:
            self.seconds[step] = round(time.monotonic() - start, 1)


@pytest.fixture(scope="module")
def timings():
    steps = _Timings()
    yield steps
    print(f"hub test steps (s): {steps.seconds}")


def _folder(run: str, what: str) -> Path:
    """A run's folders outside its pytest tmp folder: the course's git repositories
    ("git"), the hub's database ("state"), the homes being deleted ("trash")."""
    if what == "trash":  # beside the homes: they are moved into it, not copied
        return Path(f"/home/.{ACCOUNT_PREFIX}{run}-trash")
    return Path(f"/var/tmp/{ACCOUNT_PREFIX}{run}-{what}")


def _new_folder(what: str, mode: int = 0o755) -> Path:
    """This run's folder `what`, made now and marked as the run's (its file .owner)."""
    folder = _folder(RUN, what)
    folder.mkdir(mode=mode)
    (folder / ".owner").write_text(OWNER)
    return folder


def _folders_left_by_killed_runs() -> list[Path]:
    """The folders of runs whose process is gone, by the mark in them."""
    left = []
    for folder in [*Path("/var/tmp").glob(f"{ACCOUNT_PREFIX}*-*"),
                   *Path("/home").glob(f".{ACCOUNT_PREFIX}*-trash")]:
        with contextlib.suppress(OSError):
            mark = OWNER_MARK.fullmatch((folder / ".owner").read_text())
            if mark and _gone(mark) and folder == _folder(mark["run"], folder.name.split("-")[-1]):
                left.append(folder)
    return left


def _remove_account(name: str, trash: Path) -> bool:
    """The account and its processes go now, its home into `trash`; False if it stays."""
    account = _account(name)
    if account is None:
        return True  # another run's sweep was first
    subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
    with contextlib.suppress(FileNotFoundError):  # (here too)
        if Path(account.pw_dir).is_dir():
            Path(account.pw_dir).rename(trash / name)
    subprocess.run(["rm", "-rf", f"/var/mail/{name}"], capture_output=True)
    for _ in range(50):
        # userdel refuses while a process of the account is alive (status 8), and a
        # killed process takes a moment to go; 6: the account is gone already
        if subprocess.run(["userdel", name], capture_output=True).returncode in (0, 6):
            return True
        subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
        time.sleep(0.2)
    return False


def _left_by_killed_runs() -> dict[str, str]:
    """Accounts made by a run of this test whose process is gone (killed before its
    clean-up): name -> that run's suffix. A live run's accounts are never among them."""
    left = {}
    for entry in pwd.getpwall():
        mark = OWNER_MARK.fullmatch(entry.pw_gecos)
        if mark and entry.pw_name.startswith(ACCOUNT_PREFIX) and _gone(mark):
            left[entry.pw_name] = mark["run"]
    return left


# -- the processes of runs that were killed ------------------------------------------------


def _processes() -> dict[int, tuple[int, str, str]]:
    """Every process: pid -> (its parent's pid, its state letter, when it started)."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                table[int(entry.name)] = (int(fields[1]), fields[0], fields[19])
    return table


def _mark_of(pid: int) -> re.Match | None:
    """The run mark in process `pid`'s environment, if it carries one (and may be read)."""
    with contextlib.suppress(OSError):
        for item in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
            name, _, value = item.partition(b"=")
            if name == RUN_VARIABLE.encode():
                return OWNER_MARK.fullmatch(value.decode(errors="replace"))
    return None


def _gone(mark: re.Match) -> bool:
    """The run that made `mark` is over: its process is gone (or its pid is another's)."""
    return _since(int(mark["pid"])) != mark["since"]


def _processes_left_by_killed_runs() -> dict[int, str]:
    """The processes of runs whose process is gone: pid -> when it started, parents before
    their children. They are the processes that carry such a run's mark and their
    descendants (a descendant carrying a live run's mark, and the processes this one
    descends from, excepted): a live run's are never among them."""
    table = _processes()
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    mine, pid = set(), os.getpid()
    while pid in table and pid not in mine:
        mine.add(pid)
        pid = table[pid][0]
    marks = {pid: _mark_of(pid) for pid in table}
    queue = [pid for pid, mark in marks.items() if mark and _gone(mark)]
    left: dict[int, str] = {}
    while queue:
        pid = queue.pop(0)
        mark = marks.get(pid)
        if pid in left or pid in mine or (mark and not _gone(mark)):
            continue
        if table[pid][1] != "Z":  # a zombie is dead already (its parent has not waited)
            left[pid] = table[pid][2]
        queue.extend(children.get(pid, []))
    return left


def _stop_processes_left_by_killed_runs() -> dict[int, str]:
    """Kill the processes killed runs left (the hub first, so that it starts nothing
    again); pid -> command line of those killed."""
    stopped: dict[int, str] = {}
    for _ in range(20):
        left = _processes_left_by_killed_runs()
        if not left:
            return stopped
        for pid, since in left.items():
            with contextlib.suppress(OSError):
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                if _since(pid) == since:  # that process still, not a reused pid
                    os.kill(pid, signal.SIGKILL)
                    stopped[pid] = command.decode(errors="replace").strip()
        time.sleep(0.2)
    raise RuntimeError(f"processes of killed runs keep running: {sorted(left)}")


@contextlib.contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP interrupt the run as Ctrl-C does, so its clean-up runs (by
    default they end the process at once and leave everything to the next run); a second
    one is ignored, so that the clean-up is not cut short. Only in the main thread, the
    one that receives signals."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = (signal.SIGTERM, signal.SIGHUP)

    def interrupt(signum: int, frame) -> None:
        for number in caught:
            signal.signal(number, signal.SIG_IGN)
        raise KeyboardInterrupt(f"the hub test got {signal.Signals(signum).name}")

    before = {number: signal.signal(number, interrupt) for number in caught}
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


@pytest.fixture(scope="module", autouse=True)
def signals_end_the_run_cleanly():
    with _signals_interrupt():
        yield


@pytest.fixture(scope="module")
def trash(hub_machine, timings):
    """What runs that were killed left is gone (first their processes, then their accounts
    and their folders); the folder this run moves homes into, deleted at its end."""
    trash = _new_folder("trash")
    try:
        with timings("killed runs cleared"):
            stopped = _stop_processes_left_by_killed_runs()
            if stopped:
                print(f"stopped {len(stopped)} processes left by killed runs: " + "; ".join(
                    f"{pid} {command[:100]}" for pid, command in stopped.items()))
            folders = _folders_left_by_killed_runs()
            for name, run in _left_by_killed_runs().items():
                _remove_account(name, trash)
                folders += [_folder(run, what) for what in ("git", "state", "trash")]
            for folder in folders:
                shutil.rmtree(folder, ignore_errors=True)
        yield trash
    finally:  # in the background (the homes of this run's accounts are in it)
        subprocess.Popen(["rm", "-rf", str(trash)], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def accounts(trash, timings):
    """Local accounts with homes of their own, this run's: name -> password."""
    owner = OWNER
    made, kept = {}, []
    try:
        with timings("accounts made"):
            for name in _names(RUN):
                made[name] = secrets.token_urlsafe(12)
                subprocess.run(["useradd", "-m", "-s", "/bin/bash", "-c", owner, name],
                               check=True)
            subprocess.run(["chpasswd"], check=True, text=True,
                           input="".join(f"{n}:{p}\n" for n, p in made.items()))
        yield made
    finally:
        with timings("accounts removed"):
            # this run's accounts go now (only those it made: useradd may have failed
            # on a name); their homes are deleted in the background
            for name in made:
                account = _account(name)
                if account and account.pw_gecos == owner and not _remove_account(name, trash):
                    kept.append(name)
    assert not kept, f"userdel kept refusing to remove {kept}"


def _seal_answers():
    spec = importlib.util.spec_from_file_location("seal_answers",
                                                  ROOT / "scripts" / "seal_answers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def course_repo(tmp_path_factory, timings):
    """The course in two git repositories, served on the loopback by `git daemon` (what
    they are on a real hub): the learners' (`python scripts/seal_answers.py learner-tree`:
    no solved lessons, no tests, the answer key sealed) and the instructor's (this
    checkout's files)."""
    base = _new_folder("git")
    with timings("course repositories"):
        _seal_answers().learner_tree(base / "minigrad-course")
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.split("\n")
        for name in filter(None, files):
            if (ROOT / name).is_file():
                (base / "minigrad-source" / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, base / "minigrad-source" / name)
        git = ["git", "-c", "user.name=course", "-c", "user.email=course@localhost"]
        for work in (base / "minigrad-course", base / "minigrad-source"):
            subprocess.run([*git, "init", "-q", "-b", "main"], cwd=work, check=True)
            subprocess.run([*git, "add", "-A"], cwd=work, check=True)
            subprocess.run([*git, "commit", "-q", "-m", "the course"], cwd=work, check=True)
    daemon = None
    try:
        with _ports(1) as (port,):
            daemon = subprocess.Popen(
                ["git", "daemon", "--export-all", "--reuseaddr", f"--base-path={base}",
                 "--listen=127.0.0.1", f"--port={port}", str(base)],
                env=_marked(dict(os.environ)), stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
            _listen_on([port], daemon, "git daemon")
        yield {"learners": f"git://127.0.0.1:{port}/minigrad-course",
               "instructor": f"git://127.0.0.1:{port}/minigrad-source"}
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=30)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def hub(installed, accounts, timings):
    """A JupyterHub running docs/hub/jupyterhub_config.py on the installed course."""
    state = _new_folder("state", mode=0o700)
    exchange = installed / "exchange"
    shutil.rmtree(exchange, ignore_errors=True)  # a fresh exchange, as install.sh leaves it
    exchange.mkdir()
    exchange.chmod(0o777)
    log = (state / "hub.log").open("wb")
    hub_log = lambda: (state / "hub.log").read_text()[-4000:]  # noqa: E731
    started, process = time.monotonic(), None
    try:
        with _ports(3) as (port, api_port, proxy_api_port):
            env = _marked(dict(
                os.environ, MINIGRAD_HUB_PREFIX=str(installed), MINIGRAD_HUB_STATE=str(state),
                MINIGRAD_HUB_URL=f"http://127.0.0.1:{port}",
                MINIGRAD_HUB_API_PORT=str(api_port),
                MINIGRAD_HUB_PROXY_API_PORT=str(proxy_api_port),
                MINIGRAD_HUB_INSTRUCTORS=INSTRUCTOR,
                MINIGRAD_HUB_LEARNERS=",".join(n for n in accounts if n != INSTRUCTOR),
                PATH=f"{installed / 'env' / 'bin'}:{os.environ['PATH']}"))
            # in a process group of its own, with the proxy and the idle culler it starts
            process = subprocess.Popen([str(installed / "env/bin/jupyterhub"),
                                        "-f", str(HUB_DOCS / "jupyterhub_config.py")],
                                       cwd=state, env=env, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
            _listen_on([port, api_port, proxy_api_port], process, "the hub", log=hub_log)
        url = f"http://127.0.0.1:{port}"
        for _ in range(240):
            try:
                if requests.get(f"{url}/hub/api", timeout=5).ok:
                    break
            except requests.ConnectionError:
                pass
            assert process.poll() is None, hub_log()
            time.sleep(0.5)
        else:
            pytest.fail("the hub did not answer: " + hub_log())
        timings.seconds["hub started"] = round(time.monotonic() - started, 1)
        yield {"url": url, "prefix": installed, "log": state / "hub.log"}
    finally:
        with timings("hub stopped"):
            # nothing of the hub is kept: the learners' servers, the proxy and the culler
            # (the hub's children) and the hub are killed, not stopped one by one (the
            # hub's own shutdown takes over 20 s)
            for name in accounts:
                subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
            if process is not None:
                subprocess.run(["pkill", "-KILL", "-P", str(process.pid)], capture_output=True)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.close()
        shutil.rmtree(state, ignore_errors=True)


@pytest.fixture(scope="module")
def lesson_of_the_day(hub, accounts, course_repo, tmp_path_factory) -> dict:
    """The class, acted out by tests/hub/classroom.py; its report."""
    work = tmp_path_factory.mktemp("class")
    learners = [{"name": learner_name(i), "password": accounts[learner_name(i)],
                 "answers": answers, "extra_cells": extra, "hands_in": i in HANDS_IN}
                for i, (answers, extra) in CLASS.items()]
    teacher = INSTRUCTOR
    plan = {"hub": hub["url"], "course_id": COURSE_ID, "lesson": LESSON,
            "repo": course_repo["learners"], "instructor_repo": course_repo["instructor"],
            "branch": "main",
            "python": str(hub["prefix"] / "env/bin/python"),
            "solved_notebook": str(ROOT / "notebooks" / f"{LESSON}.ipynb"),
            "instructor": {"name": teacher, "password": accounts[teacher]},
            "learners": learners}
    (work / "plan.json").write_text(json.dumps(plan))
    started = time.monotonic()
    done = subprocess.run([str(hub["prefix"] / "env/bin/python"),
                           str(Path(__file__).with_name("classroom.py")),
                           str(work / "plan.json"), str(work / "report.json")],
                          capture_output=True, text=True, timeout=CLASS_TIMEOUT_S,
                          env=_marked(dict(os.environ)))
    assert (work / "report.json").exists(), (
        done.stdout[-3000:] + done.stderr[-6000:] + hub["log"].read_text()[-3000:])
    report = json.loads((work / "report.json").read_text())
    report["seconds"] = time.monotonic() - started
    print(f"the class took {report['seconds']:.0f} s ({report['phases']}); the instructor's "
          "commands: " + ", ".join(
        f"{' '.join(c['argv'][1:3])} {c['seconds']:.0f} s"
        for c in report["instructor"]["commands"]))
    retried = {name: person["just_started"] for name, person in
               [*report["learners"].items(), (teacher, report["instructor"])]
               if person.get("just_started")}
    if retried:  # a server that did not answer at once when the hub said it was ready
        print(f"asked again just after the server started: {retried}")
    assert not report["errors"], report["errors"]
    report["gradebook"] = _grades(hub["prefix"], Path(f"~{teacher}").expanduser())
    report["homes"] = {n: Path(f"~{n}").expanduser() for n in accounts}
    return report


def _grades(prefix: Path, teacher_home: Path) -> dict[str, dict[str, float]]:
    """Every learner's score per grade cell, read from the instructor's gradebook."""
    code = ("import json, sys\nfrom nbgrader.api import Gradebook\n"
            "with Gradebook(sys.argv[1]) as gb:\n"
            f"    print(json.dumps({{s.id: {{g.name: g.score for g in gb.find_submission_notebook("
            f"{LESSON!r}, {LESSON!r}, s.id).grades}} for s in gb.students}}))\n")
    db = f"sqlite:///{teacher_home / 'minigrad-grading' / 'gradebook.db'}"
    out = subprocess.run([str(prefix / "env/bin/python"), "-c", code, db],
                         capture_output=True, text=True, check=True,
                         env=dict(os.environ, PATH=f"{prefix / 'env/bin'}:{os.environ['PATH']}"))
    return json.loads(out.stdout)


def _command(report, *argv) -> dict:
    found = [c for c in report["instructor"]["commands"] if c["argv"][-len(argv):] == list(argv)
             or c["argv"][1:1 + len(argv)] == list(argv)]
    assert found, [c["argv"] for c in report["instructor"]["commands"]]
    return found[0]


# -- the tests ----------------------------------------------------------------------------


def test_every_instructor_step_succeeds(lesson_of_the_day):
    for command in lesson_of_the_day["instructor"]["commands"]:
        assert command["status"] == 0, (command["argv"], command["output"][-3000:])


def test_every_grade(lesson_of_the_day):
    grades = lesson_of_the_day["gradebook"]
    names = sorted(ALL_RIGHT)
    assert sorted(grades) == sorted(learner_name(i) for i in HANDS_IN)
    for number in HANDS_IN:
        answers, extra = CLASS[number]
        if extra:
            continue  # the attacker: test_a_patching_cell_scores_nothing
        expected = {n: 1.0 if answers.get(n) == "right" else 0.0 for n in names}
        assert grades[learner_name(number)] == expected, number
    assert sum(grades[learner_name(3)].values()) == 3


def test_a_patching_cell_scores_nothing(lesson_of_the_day):
    grades = lesson_of_the_day["gradebook"][learner_name(5)]
    assert sorted(grades) == sorted(ALL_RIGHT)
    assert sum(grades.values()) == 0, grades


def test_the_exported_grades_are_the_gradebook_s(lesson_of_the_day):
    rows = list(csv.DictReader(io.StringIO(lesson_of_the_day["instructor"]["grades_csv"])))
    scores = {r["student_id"]: float(r["score"]) for r in rows if r["assignment"] == LESSON}
    assert scores == {s: sum(g.values()) for s, g in lesson_of_the_day["gradebook"].items()}


def test_autograde_warns_that_grade_cells_changed(lesson_of_the_day):
    # the released grade cells hold no test (it is hidden): autograde puts it back and
    # says so for every grade cell of every hand-in (docs/instructor.md tells instructors)
    output = _command(lesson_of_the_day, "autograde", LESSON)["output"]
    warned = re.findall(r"Attribute 'checksum' for cell (\S+) has changed!", output)
    assert sorted(warned) == sorted(sorted(ALL_RIGHT) * len(HANDS_IN)), output[-3000:]


def test_every_learner_who_handed_in_gets_feedback(lesson_of_the_day):
    for number in HANDS_IN:
        name = learner_name(number)
        learner = lesson_of_the_day["learners"][name]
        assert learner["fetch_feedback"]["success"], learner["fetch_feedback"]
        assert [Path(p).name for p in learner["feedback"]] == [f"{LESSON}.html"], name
        home = lesson_of_the_day["homes"][name]
        html = next((home / LESSON / "feedback").glob(f"*/{LESSON}.html")).read_text()
        score = sum(lesson_of_the_day["gradebook"][name].values())
        assert f"Score: {score:g}" in html or f"{score:g} / {len(ALL_RIGHT)}" in html, name


def test_learners_work_through_the_lesson_in_their_kernel(lesson_of_the_day):
    for number, (answers, _) in CLASS.items():
        learner = lesson_of_the_day["learners"][learner_name(number)]
        assert learner["fetch"]["success"]
        assert learner["submit"]["success"] if number in HANDS_IN else "submit" not in learner
        errors = [c["ename"] for c in learner["run"]["cells"] if c["ename"]]
        wrong = sum(1 for how in answers.values() if how == "wrong")
        assert errors == ["WrongAnswer"] * wrong, errors
        said = "".join(c["text"] for c in learner["run"]["cells"])
        solved = sum(1 for how in answers.values() if how == "right")
        assert said.count("Correct!") == solved
        assert said.count("Not yet solved") == len(ALL_RIGHT) - len(answers)


def test_learners_pull_the_course_with_nbgitpuller(lesson_of_the_day):
    for name, learner in lesson_of_the_day["learners"].items():
        assert learner["pull"] == {"phase": "finished"}, name
        home = lesson_of_the_day["homes"][name]
        assert (home / "minigrad" / "notebooks" / "learner" / f"{LESSON}.ipynb").is_file()


def test_learners_get_no_answer_key(lesson_of_the_day, hub):
    # neither in the course they pull (no solved lessons, no tests, the banks sealed)
    # nor in the installed package (built as a wheel: scripts/seal_answers.py)
    site = next((hub["prefix"] / "env" / "lib").glob("python3*/site-packages"))
    for widgets in [site / "widgets"] + [
            lesson_of_the_day["homes"][learner_name(i)] / "minigrad" / "widgets"
            for i in CLASS]:
        assert (widgets / "_exercise_bank.py").read_text().startswith("# Built from"), widgets
        assert (widgets.parent / "notebooks").exists() == (widgets.parent != site)
    for i in CLASS:
        home = lesson_of_the_day["homes"][learner_name(i)] / "minigrad"
        assert not (home / "notebooks" / f"{LESSON}.ipynb").exists()
        assert not (home / "tests").exists() and not (home / "scripts/answer_key.json").exists()
    assert (site / "widgets" / "_answer_key.py").is_file()


def test_only_the_instructor_reaches_the_formgrader(lesson_of_the_day):
    assert lesson_of_the_day["instructor"]["formgrader_status"] == 200
    for name, learner in lesson_of_the_day["learners"].items():
        assert learner["formgrader_status"] == 404, name


def test_the_first_lesson_runs_on_the_kernels_compiled_at_install(lesson_of_the_day, hub):
    # each learner's numba cache is a copy of the one compiled by install.sh, and running
    # the lesson compiled nothing more (numba writes a new file for every kernel it compiles)
    seed = {p.relative_to(hub["prefix"] / "numba-cache")
            for p in (hub["prefix"] / "numba-cache").rglob("*") if p.is_file()}
    assert any(p.suffix == ".nbc" for p in seed)
    for name, learner in lesson_of_the_day["learners"].items():
        cache = lesson_of_the_day["homes"][name] / ".cache" / "numba"
        mine = {p.relative_to(cache) for p in cache.rglob("*") if p.is_file()}
        assert mine == seed, (name, sorted(mine - seed)[:5])
        print(f"{name}: server {learner['server_s']:.1f} s, lesson {learner['run']['seconds']:.1f}"
              f" s, first output {learner['run']['first_output_s']:.1f} s")


def test_each_server_gets_its_memory_limit_and_a_numba_cache_of_its_own(lesson_of_the_day):
    # LocalProcessSpawner passes the limit on (SystemdSpawner or Kubernetes enforce it)
    for name, learner in lesson_of_the_day["learners"].items():
        cache = lesson_of_the_day["homes"][name] / ".cache" / "numba"
        assert learner["env"] == [str(1024 ** 3), str(cache)], name


def test_the_idle_culler_runs(lesson_of_the_day):
    services = lesson_of_the_day["instructor"]["services"]
    assert isinstance(services, dict) and "idle-culler" in services, services
    culler = services["idle-culler"]
    assert "jupyterhub_idle_culler" in " ".join(culler["command"])
    assert culler["pid"] and os.path.exists(f"/proc/{culler['pid']}"), culler


def test_the_course_is_installed_read_only(hub):
    site = next((hub["prefix"] / "env" / "lib").glob("python3*/site-packages"))
    for path in [site / "widgets", site / "widgets" / "exercises.py", site / "minigrad"]:
        mode = path.stat().st_mode
        assert path.stat().st_uid == 0 and not mode & (stat.S_IWGRP | stat.S_IWOTH), path
