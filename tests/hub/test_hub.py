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
those at the end, passed or failed; the accounts of a run that was killed (its process is
gone) are removed by the next run. Runs that share one installed environment (the
same checkout, or /opt/minigrad-hub-test) take turns: it holds the nbgrader exchange.
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
import time
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


def learner_name(number: int) -> str:
    return f"{ACCOUNT_PREFIX}{RUN}-learner{number}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
def installed(hub_machine, timings):
    """The course installed for the hub (docs/hub/install.sh), in build/hub: this run's
    while it lasts (another run using the same environment waits for its turn)."""
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
            env = dict(os.environ, PREFIX=str(prefix), EXCHANGE=str(prefix / "exchange"),
                       COURSE_ID=COURSE_ID, PYTHON=hub_machine, WARM_LESSONS=LESSON[:2])
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
        if (mark and entry.pw_name.startswith(ACCOUNT_PREFIX)
                and _since(int(mark["pid"])) != mark["since"]):
            left[entry.pw_name] = mark["run"]
    return left


@pytest.fixture(scope="module")
def accounts(timings):
    """Local accounts with homes of their own, this run's: name -> password."""
    owner = f"minigrad hub test {RUN} pid {os.getpid()} since {_since(os.getpid())}"
    trash = _folder(RUN, "trash")
    trash.mkdir()
    made, kept = {}, []
    try:
        with timings("accounts made"):
            for name, run in _left_by_killed_runs().items():
                _remove_account(name, trash)
                for what in ("git", "state", "trash"):
                    shutil.rmtree(_folder(run, what), ignore_errors=True)
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
            subprocess.Popen(["rm", "-rf", str(trash)], start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    base = _folder(RUN, "git")
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
        port = _free_port()
        daemon = subprocess.Popen(["git", "daemon", "--export-all", "--reuseaddr",
                                   f"--base-path={base}", "--listen=127.0.0.1", f"--port={port}",
                                   str(base)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield {"learners": f"git://127.0.0.1:{port}/minigrad-course",
               "instructor": f"git://127.0.0.1:{port}/minigrad-source"}
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def hub(installed, accounts, timings):
    """A JupyterHub running docs/hub/jupyterhub_config.py on the installed course."""
    state = _folder(RUN, "state")
    state.mkdir(mode=0o700)
    exchange = installed / "exchange"
    shutil.rmtree(exchange, ignore_errors=True)  # a fresh exchange, as install.sh leaves it
    exchange.mkdir()
    exchange.chmod(0o777)
    port = _free_port()
    env = dict(os.environ, MINIGRAD_HUB_PREFIX=str(installed), MINIGRAD_HUB_STATE=str(state),
               MINIGRAD_HUB_URL=f"http://127.0.0.1:{port}",
               MINIGRAD_HUB_API_PORT=str(_free_port()),
               MINIGRAD_HUB_PROXY_API_PORT=str(_free_port()),
               MINIGRAD_HUB_INSTRUCTORS=INSTRUCTOR,
               MINIGRAD_HUB_LEARNERS=",".join(n for n in accounts if n != INSTRUCTOR),
               PATH=f"{installed / 'env' / 'bin'}:{os.environ['PATH']}")
    log = (state / "hub.log").open("wb")
    # in a process group of its own, with the proxy and the idle culler it starts
    process = subprocess.Popen([str(installed / "env/bin/jupyterhub"),
                                "-f", str(HUB_DOCS / "jupyterhub_config.py")],
                               cwd=state, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    try:
        for _ in range(240):
            try:
                if requests.get(f"{url}/hub/api", timeout=5).ok:
                    break
            except requests.ConnectionError:
                pass
            assert process.poll() is None, (state / "hub.log").read_text()[-4000:]
            time.sleep(0.5)
        else:
            pytest.fail("the hub did not answer: " + (state / "hub.log").read_text()[-4000:])
        timings.seconds["hub started"] = round(time.monotonic() - started, 1)
        yield {"url": url, "prefix": installed, "log": state / "hub.log"}
    finally:
        with timings("hub stopped"):
            # nothing of the hub is kept: the learners' servers, the proxy and the culler
            # (the hub's children) and the hub are killed, not stopped one by one (the
            # hub's own shutdown takes over 20 s)
            for name in accounts:
                subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
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
                          capture_output=True, text=True, timeout=CLASS_TIMEOUT_S)
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
