"""What keeps the hub test steady (tests/hub/test_hub.py, tests/hub/classroom.py), checked
without a hub and without root, with stand-in processes: each run's own account names,
the clean-up of the accounts, processes and folders left by a killed run (and of no live
run's), SIGTERM ending a run with its clean-up, ports no two runs share, taking turns on
one installed environment, and asking a just-started server again, for a bounded time,
when it does not answer yet.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"hub_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hub_test = _load("test_hub")


# -- account names and their clean-up ----------------------------------------------------------


def test_each_run_names_its_accounts_with_a_suffix_of_its_own():
    mine, other = hub_test._names(hub_test.RUN), hub_test._names(hub_test._new_run())
    assert not set(mine) & set(other)
    assert hub_test.INSTRUCTOR in mine and hub_test.learner_name(5) in mine
    for name in mine + other:
        # useradd's default NAME_REGEX, and 32 characters at most
        assert re.fullmatch(r"[a-z][-a-z0-9_]*", name) and len(name) <= 32, name
        assert name.startswith(hub_test.ACCOUNT_PREFIX)


def _entry(name: str, gecos: str) -> pwd.struct_passwd:
    return pwd.struct_passwd((name, "x", 2000, 2000, gecos, f"/home/{name}", "/bin/bash"))


def test_only_the_accounts_of_runs_that_are_gone_are_swept(monkeypatch):
    me, since = os.getpid(), hub_test._since(os.getpid())
    gone = max(int(Path("/proc/sys/kernel/pid_max").read_text()), 1 << 22) + 1
    entries = [
        _entry("mghub-aaaaaa-learner1", f"minigrad hub test aaaaaa pid {me} since {since}"),
        _entry("mghub-bbbbbb-learner1", f"minigrad hub test bbbbbb pid {gone} since 5"),
        # this pid, but started at another time: the run's process is gone, its pid reused
        _entry("mghub-cccccc-learner1",
               f"minigrad hub test cccccc pid {me} since {int(since) + 1}"),
        _entry("mghub-learner1", ""),  # not made by a run of this test as it is now
        _entry("someone", f"minigrad hub test dddddd pid {gone} since 5"),
    ]
    monkeypatch.setattr(hub_test.pwd, "getpwall", lambda: entries)
    assert hub_test._left_by_killed_runs() == {"mghub-bbbbbb-learner1": "bbbbbb",
                                               "mghub-cccccc-learner1": "cccccc"}


def _gone_pid() -> int:
    """A pid no process has (above the largest the kernel gives)."""
    return max(int(Path("/proc/sys/kernel/pid_max").read_text()), 1 << 22) + 1


def _dead(pid: int) -> bool:
    """Process `pid` is gone, or a zombie (dead, its parent has not waited for it yet)."""
    table = hub_test._processes()
    return pid not in table or table[pid][1] == "Z"


# A killed run's hub (its mark in its environment) starts a culler (no mark, a session of
# its own), which starts a child of its own, and a process that carries a live run's mark;
# it prints their pids and waits.
STAND_IN_HUB = """
import os, subprocess, sys, time
plain = {k: v for k, v in os.environ.items() if k != sys.argv[1]}
culler = subprocess.Popen(
    [sys.executable, "-c", "import subprocess, time; p = subprocess.Popen(['sleep', '300']);"
     "print(p.pid, flush=True); time.sleep(300)"],
    env=plain, start_new_session=True, stdout=subprocess.PIPE, text=True)
grandchild = int(culler.stdout.readline())
live = subprocess.Popen(["sleep", "300"], env=dict(plain, **{sys.argv[1]: sys.argv[2]}))
print(culler.pid, grandchild, live.pid, flush=True)
time.sleep(300)
"""


def test_a_killed_run_s_processes_and_theirs_are_stopped_and_no_others():
    me, since = os.getpid(), hub_test._since(os.getpid())
    gone_run = f"minigrad hub test dddddd pid {_gone_pid()} since 5"
    reused_pid = f"minigrad hub test eeeeee pid {me} since {int(since) + 1}"
    live_run = f"minigrad hub test ffffff pid {me} since {since}"
    variable = hub_test.RUN_VARIABLE
    plain = {k: v for k, v in os.environ.items() if k != variable}
    started = []
    try:
        hub = subprocess.Popen([sys.executable, "-c", STAND_IN_HUB, variable, live_run],
                               env=dict(plain, **{variable: gone_run}), stdout=subprocess.PIPE,
                               text=True)
        started.append(hub.pid)
        culler, grandchild, live_child = map(int, hub.stdout.readline().split())
        started += [culler, grandchild, live_child]
        daemon = subprocess.Popen(["sleep", "300"], env=dict(plain, **{variable: reused_pid}))
        live = subprocess.Popen(["sleep", "300"], env=dict(plain, **{variable: live_run}))
        unmarked = subprocess.Popen(["sleep", "300"], env=plain)
        started += [daemon.pid, live.pid, unmarked.pid]
        left = hub_test._processes_left_by_killed_runs()
        assert {hub.pid, culler, grandchild, daemon.pid} <= set(left)
        assert not {live.pid, unmarked.pid, live_child, me} & set(left)
        assert list(left).index(hub.pid) < list(left).index(culler)  # the hub first

        stopped = hub_test._stop_processes_left_by_killed_runs()
        assert {hub.pid, culler, grandchild, daemon.pid} <= set(stopped)
        assert hub.wait(timeout=10) == daemon.wait(timeout=10) == -signal.SIGKILL
        deadline = time.monotonic() + 10
        while not (_dead(culler) and _dead(grandchild)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _dead(culler) and _dead(grandchild)
        assert live.poll() is None and unmarked.poll() is None and not _dead(live_child)
        assert not set(hub_test._processes_left_by_killed_runs()) & set(started)
    finally:
        for pid in started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_killed_run_s_folders_are_found_by_their_mark_and_no_others():
    gone_run = f"minigrad hub test {{}} pid {_gone_pid()} since 5"
    live_run = f"minigrad hub test {{}} pid {os.getpid()} since {hub_test._since(os.getpid())}"
    runs = {secrets.token_hex(3): mark for mark in (gone_run, live_run, None)}
    folders = {run: hub_test._folder(run, "state") for run in runs}
    try:
        for run, mark in runs.items():
            folders[run].mkdir()
            if mark:
                (folders[run] / ".owner").write_text(mark.format(run))
        left = hub_test._folders_left_by_killed_runs()
        assert [f for f in left if f in folders.values()] == [folders[list(runs)[0]]]
    finally:
        for folder in folders.values():
            shutil.rmtree(folder, ignore_errors=True)


# A run that SIGTERM ends runs its clean-up (here: stops its stand-in hub).
INTERRUPTED_RUN = """
import importlib.util, subprocess, sys, time
spec = importlib.util.spec_from_file_location("hub_test", sys.argv[1])
hub_test = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hub_test)
hub = subprocess.Popen(["sleep", "300"])
try:
    with hub_test._signals_interrupt():
        print(hub.pid, flush=True)
        time.sleep(300)
finally:
    hub.kill()
    print("cleaned up", hub.wait(), flush=True)
"""


def test_sigterm_ends_a_run_with_its_clean_up():
    run = subprocess.Popen([sys.executable, "-c", INTERRUPTED_RUN, str(HERE / "test_hub.py")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hub = int(run.stdout.readline())
    run.send_signal(signal.SIGTERM)
    out, err = run.communicate(timeout=30)
    assert out == f"cleaned up {-signal.SIGKILL}\n", err
    assert "KeyboardInterrupt: the hub test got SIGTERM" in err
    assert _dead(hub)


# -- ports --------------------------------------------------------------------------------------


def test_the_ports_a_run_chooses_at_once_differ(tmp_path):
    with hub_test._ports(64, tmp_path / "ports.lock") as ports:
        assert len(set(ports)) == 64


def test_a_run_chooses_its_ports_only_once_another_s_are_listened_on(tmp_path):
    lock, events, listeners = tmp_path / "ports.lock", [], []

    def first():
        with hub_test._ports(3, lock) as ports:
            events.append(("first chose", ports))
            time.sleep(1.0)  # its processes start, then listen
            for port in ports:
                listener = socket.socket()
                listener.bind(("127.0.0.1", port))
                listener.listen()
                listeners.append(listener)
            events.append(("first listens", ports))

    thread = threading.Thread(target=first)
    thread.start()
    while not events:
        time.sleep(0.01)
    try:
        with hub_test._ports(3, lock) as mine:
            events.append(("second chose", mine))
        thread.join()
        assert [what for what, _ in events] == ["first chose", "first listens", "second chose"]
        assert not set(events[0][1]) & set(mine)
    finally:
        thread.join()
        for listener in listeners:
            listener.close()


def test_a_process_s_ports_are_its_own_once_it_listens():
    listen = ("import socket, sys, time; s = socket.socket(); "
              "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); time.sleep(300)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-c", listen, str(port)])
    try:
        hub_test._listen_on([port], server, "the server", timeout=30)
        assert hub_test._listening(port) == {server.pid}
    finally:
        server.kill()
        server.wait()
    # another process listens on the port: said at once, not taken for the process's
    with socket.socket() as other:
        other.bind(("127.0.0.1", port))
        other.listen()
        idle = subprocess.Popen(["sleep", "300"])
        try:
            with pytest.raises(AssertionError, match=f"other processes listen .*{port}"):
                hub_test._listen_on([port], idle, "the server", timeout=30)
        finally:
            idle.kill()
            idle.wait()
    # a process that ends before it listens
    ended = subprocess.Popen(["true"])
    ended.wait()
    with pytest.raises(AssertionError, match=r"the server ended \(0\)"):
        hub_test._listen_on([port], ended, "the server", timeout=30)


def test_a_run_waits_its_turn_on_one_installed_environment_and_says_so(tmp_path):
    with (tmp_path / ".in-use").open("w") as first, (tmp_path / ".in-use").open("w") as second:
        hub_test._take_turn(first, "the environment", 1)
        with pytest.raises(pytest.fail.Exception, match="another run of the hub test"):
            hub_test._take_turn(second, "the environment", 1)
        fcntl.flock(first, fcntl.LOCK_UN)  # the first run is over
        hub_test._take_turn(second, "the environment", 1)


# -- a server just started -----------------------------------------------------------------


@pytest.fixture
def server():
    """A stand-in for the hub and one server: the token API, then `answers` in turn (the
    last one for good) to every other GET; `asked` counts them."""
    state = {"answers": [200], "asked": 0}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self._send(200, b'{"token": "t"}')

        def do_GET(self):
            state["asked"] += 1
            answers = state["answers"]
            self._send(answers.pop(0) if len(answers) > 1 else answers[0], b"{}")

        def _send(self, status: int, body: bytes):
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    classroom = _load("classroom")
    account = classroom.Account(f"http://127.0.0.1:{httpd.server_address[1]}", "x", "pw")
    account.ready_at = time.monotonic()
    yield classroom, account, state
    httpd.shutdown()
    httpd.server_close()


def test_a_just_started_server_is_asked_again_until_it_answers(server):
    _, account, state = server
    state["answers"] = [404, 503, 200]
    assert account.get_first("api/status").status_code == 200
    assert state["asked"] == 3 and len(account.just_started) == 2


def test_a_server_that_never_answers_fails_in_bounded_time_saying_why(server, monkeypatch):
    classroom, account, state = server
    monkeypatch.setattr(classroom, "JUST_STARTED_S", 1.5)
    state["answers"] = [404]
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r"x's server, reported ready .* still answers 404"):
        account.get_first("git-pull")
    assert time.monotonic() - start < 5


def test_only_a_just_started_server_s_missing_answers_are_asked_again(server):
    _, account, state = server
    state["answers"] = [500]  # a real failure: returned as it is, at once
    assert account.get_first("git-pull").status_code == 500 and state["asked"] == 1
    account.ready_at = time.monotonic() - 600  # long ready: a 404 is not a start-up's
    state["answers"], state["asked"] = [404], 0
    with pytest.raises(TimeoutError, match="still answers 404"):
        account.get_first("git-pull")
    assert state["asked"] == 1
