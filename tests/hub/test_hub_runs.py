"""What keeps the hub test steady (tests/hub/test_hub.py, tests/hub/classroom.py), checked
without a hub and without root: each run's own account names, the clean-up of accounts
left by a killed run (and of no live run's), taking turns on one installed environment,
and asking a just-started server again, for a bounded time, when it does not answer yet.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import pwd
import re
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
