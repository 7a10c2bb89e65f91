"""A class on a JupyterHub, acted out through the hub's REST API and the kernel protocol.

Each learner and the instructor does what a person in a browser would: log in (the
hub's token API checks the password with PAM), start a server, pull the course with an
nbgitpuller link, fetch an nbgrader assignment from the Assignments tab's endpoints, open
the notebook, type answers into its exercise cells, run it cell by cell in a kernel of
their own, save it and submit it. The instructor, in a kernel on their own server, makes
the course directory, releases the assignment, collects, autogrades, releases feedback
and exports the grades.

Run by tests/hub/test_hub.py with the course environment's Python (it has ``requests``
and ``websocket-client``); it can also be pointed at a hub by hand::

    python classroom.py PLAN.json REPORT.json

PLAN names the hub, the accounts, the lesson and what each learner answers (see
``test_hub.py``); REPORT gets what happened: every learner's cell outputs and timings,
the instructor's commands and their output, and the grades.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import requests
import websocket

# A server the hub reports ready may not answer through the proxy at once: in one run a
# learner's first request (their nbgitpuller link) got a 404 just after the hub said ready.
# The first requests to a server retry these answers for this long after it became ready,
# and no longer: past that, and for any other answer, a failure is a failure.
JUST_STARTED = frozenset({404, 424, 502, 503})
JUST_STARTED_S = 60.0

STUB_VALUE = re.compile(r"^(?P<name>answer_\w+) = NotImplemented  # not yet solved.*$", re.M)
STUB_RAISE = re.compile(r'^(?P<indent>\s+)raise NotImplementedError\("not yet solved.*$', re.M)


class Account:
    """One person on the hub: their token, their server, their kernels."""

    def __init__(self, hub: str, name: str, password: str):
        self.hub, self.name = hub.rstrip("/"), name
        reply = requests.post(f"{self.hub}/hub/api/users/{name}/tokens",
                              json={"auth": {"username": name, "password": password},
                                    "note": "classroom"}, timeout=60)
        reply.raise_for_status()
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"token {reply.json()['token']}"
        self.ready_at: float | None = None  # when the hub reported the server ready
        self.just_started: list[str] = []  # the answers retried just after that

    # -- the hub -------------------------------------------------------------------------
    def start_server(self, timeout: float = 180) -> float:
        """Start this account's server; seconds until the server itself answers."""
        start = time.monotonic()
        reply = self.http.post(f"{self.hub}/hub/api/users/{self.name}/server", timeout=60)
        if reply.status_code not in (201, 202, 400):  # 400: already running
            reply.raise_for_status()
        while self.ready_at is None:
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"{self.name}'s server did not start in {timeout} s")
            model = self.http.get(f"{self.hub}/hub/api/users/{self.name}", timeout=60).json()
            if model.get("servers", {}).get("", {}).get("ready"):
                self.ready_at = time.monotonic()
            else:
                time.sleep(0.5)
        # "ready" is the hub's word: the server's own API, through the proxy, is the proof
        self.get_first("api/status").raise_for_status()
        return time.monotonic() - start

    def get_first(self, path: str) -> requests.Response:
        """GET `path` on a server that has just started: an answer of JUST_STARTED is
        asked again, until JUST_STARTED_S after the hub reported the server ready."""
        assert self.ready_at is not None, "start_server first"
        while True:
            reply = self.get(path)
            if reply.status_code not in JUST_STARTED:
                return reply
            waited = time.monotonic() - self.ready_at
            self.just_started.append(f"{reply.status_code} at {waited:.1f} s: {path[:40]}")
            if waited > JUST_STARTED_S:
                raise TimeoutError(
                    f"{self.name}'s server, reported ready by the hub {waited:.0f} s ago, "
                    f"still answers {reply.status_code} to {reply.url}: {reply.text[:300]!r}")
            time.sleep(1.0)

    def url(self, path: str) -> str:
        return f"{self.hub}/user/{self.name}/{path.lstrip('/')}"

    def get(self, path: str, **kw) -> requests.Response:
        return self.http.get(self.url(path), timeout=kw.pop("timeout", 120), **kw)

    def post(self, path: str, **kw) -> requests.Response:
        return self.http.post(self.url(path), timeout=kw.pop("timeout", 300), **kw)

    # -- handing out and in ---------------------------------------------------------------
    def git_pull(self, repo: str, branch: str, target: str) -> list[dict]:
        """What clicking an nbgitpuller link does: its page, then its event stream."""
        query = urlencode({"repo": repo, "branch": branch, "targetpath": target})
        page = self.get_first(f"git-pull?{query}&urlpath=lab")
        page.raise_for_status()
        events = []
        with self.get(f"git-pull/api?{query}", stream=True) as stream:
            for line in stream.iter_lines(decode_unicode=True):
                if line and line.startswith("data:"):
                    events.append(json.loads(line[5:]))
                    if events[-1].get("phase") in ("finished", "error"):
                        break
        return events

    def assignment_action(self, action: str, course: str, assignment: str) -> dict:
        """The Assignments tab's buttons: fetch, submit, fetch_feedback."""
        reply = self.post(f"assignments/{action}",
                          data={"course_id": course, "assignment_id": assignment})
        reply.raise_for_status()
        return reply.json()

    def read(self, path: str) -> dict:
        reply = self.get(f"api/contents/{path}")
        reply.raise_for_status()
        return reply.json()

    def save_notebook(self, path: str, notebook: dict) -> None:
        reply = self.http.put(self.url(f"api/contents/{path}"), timeout=120,
                              json={"type": "notebook", "format": "json", "content": notebook})
        reply.raise_for_status()

    # -- kernels --------------------------------------------------------------------------
    def kernel(self) -> Kernel:
        reply = self.post("api/kernels", json={"name": "python3"})
        reply.raise_for_status()
        return Kernel(self, reply.json()["id"])


class Kernel:
    """A kernel on an account's server, driven over its websocket (the kernel protocol)."""

    def __init__(self, account: Account, kernel_id: str):
        self.account, self.id = account, kernel_id
        self.session = uuid.uuid4().hex
        url = account.url(f"api/kernels/{kernel_id}/channels?session_id={self.session}")
        self.ws = websocket.create_connection(
            "ws" + url[len("http"):], timeout=600,
            header=[f"Authorization: {account.http.headers['Authorization']}"])

    def run(self, code: str, timeout: float = 600) -> dict:
        """Execute `code`; its outputs, its error (``ename``) if any, and its seconds."""
        msg_id = uuid.uuid4().hex
        self.ws.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "session": self.session,
                       "username": self.account.name, "version": "5.3", "date": ""},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True,
                        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True},
        }))
        result: dict[str, Any] = {"text": "", "ename": None, "first_output_s": None}
        start = time.monotonic()
        done = {"reply": False, "idle": False}
        while not all(done.values()):
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"a cell ran over {timeout} s")
            msg = _message(self.ws.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind in ("stream", "execute_result", "display_data", "error"):
                if result["first_output_s"] is None:
                    result["first_output_s"] = time.monotonic() - start
            if kind == "stream":
                result["text"] += content["text"]
            elif kind == "error":
                result["ename"] = content["ename"]
                result["text"] += f"{content['ename']}: {content['evalue']}\n"
            elif kind == "execute_reply":
                done["reply"] = True
            elif kind == "status" and content["execution_state"] == "idle":
                done["idle"] = True
        result["seconds"] = time.monotonic() - start
        return result

    def shutdown(self) -> None:
        self.ws.close()
        self.account.http.delete(self.account.url(f"api/kernels/{self.id}"), timeout=60)


def _message(frame: str | bytes) -> dict:
    """A kernel message from a websocket frame: text is JSON; a binary frame (a message
    with buffers, e.g. a widget's) is a count, offsets, then the JSON and the buffers."""
    if isinstance(frame, str):
        return json.loads(frame)
    count = int.from_bytes(frame[:4], "big")
    offsets = [int.from_bytes(frame[4 * i:4 * i + 4], "big") for i in range(1, count + 1)]
    return json.loads(frame[offsets[0]:offsets[1] if count > 1 else None].decode("utf-8"))


# -- what a learner types ---------------------------------------------------------------------


def answered(learner_nb: dict, solved_nb: dict, answers: dict[str, str],
             extra_cells: list[str]) -> dict:
    """`learner_nb` with the exercise cells answered: "right" takes the solved lesson's
    cell, "wrong" a wrong value (-1) or a function returning None, "untouched" leaves the
    stub. `extra_cells` are added after the first code cell (a learner's own cells)."""
    solved = {c.get("id"): c for c in solved_nb["cells"]}
    nb = json.loads(json.dumps(learner_nb))
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if not meta.get("solution"):
            continue
        how = answers.get(meta["grade_id"].removesuffix("-answer"), "untouched")
        source = "".join(cell["source"])
        if how == "right":
            source = "".join(solved[cell["id"]]["source"])
            source = "\n".join(line for line in source.split("\n")
                               if not line.startswith("### "))
        elif how == "wrong":
            source = STUB_VALUE.sub(r"\g<name> = -1", source)
            source = STUB_RAISE.sub(r"\g<indent>return None", source)
        cell["source"] = source
    first_code = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code")
    for offset, code in enumerate(extra_cells, start=1):
        nb["cells"].insert(first_code + offset, {
            "cell_type": "code", "id": f"mine-{offset}", "metadata": {}, "outputs": [],
            "execution_count": None, "source": code})
    return nb


def run_notebook(kernel: Kernel, nb: dict) -> dict:
    """Run every code cell in order, as Run All does (it stops at an error; a learner
    then fixes or skips that cell: here the next cell runs)."""
    cells, start = [], time.monotonic()
    first_output = None
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        ran = kernel.run("".join(cell["source"]))
        if first_output is None and ran["first_output_s"] is not None:
            first_output = time.monotonic() - start - ran["seconds"] + ran["first_output_s"]
        cells.append({"id": cell.get("id"), "ename": ran["ename"], "text": ran["text"][-2000:],
                      "seconds": ran["seconds"]})
    return {"cells": cells, "seconds": time.monotonic() - start,
            "first_output_s": first_output}


# -- the class ---------------------------------------------------------------------------------


def instructor_runs(kernel: Kernel, argv: list[str], cwd: str) -> dict:
    """One command line in the instructor's kernel (as they would in a terminal)."""
    code = ("import subprocess, sys, os\n"
            f"_p = subprocess.run({argv!r}, cwd=os.path.expanduser({cwd!r}), "
            "capture_output=True, text=True)\n"
            "print(_p.stdout + _p.stderr)\nprint('EXIT', _p.returncode)")
    ran = kernel.run(code)
    status = re.findall(r"^EXIT (-?\d+)$", ran["text"], re.M)
    return {"argv": argv, "status": int(status[-1]) if status else None,
            "output": ran["text"][-20000:], "seconds": ran["seconds"]}


def _in_a_kernel(account: Account, argv: list[str], cwd: str) -> dict:
    """`argv` run in a kernel of its own, shut down after."""
    kernel = account.kernel()
    try:
        return instructor_runs(kernel, argv, cwd)
    finally:
        kernel.shutdown()


def learner_works(plan: dict, who: dict, report: dict, instructor_up: threading.Event,
                  released: threading.Event) -> None:
    """A learner's day: a server and the course pulled while the instructor prepares the
    assignment; once it is released, fetch, answer, run, and hand in (or not)."""
    lesson, course = plan["lesson"], plan["course_id"]
    instructor_up.wait(timeout=600)
    me = Account(plan["hub"], who["name"], who["password"])
    mine: dict[str, Any] = {"server_s": me.start_server(), "just_started": me.just_started}
    report["learners"][who["name"]] = mine
    mine["pull"] = me.git_pull(plan["repo"], plan["branch"], "minigrad")[-1]
    released.wait(timeout=600)
    mine["fetch"] = me.assignment_action("fetch", course, lesson)
    path = f"{lesson}/{lesson}.ipynb"
    fetched = me.read(path)["content"]
    solved = json.loads(Path(plan["solved_notebook"]).read_text())
    nb = answered(fetched, solved, who["answers"], who.get("extra_cells", []))
    me.save_notebook(path, nb)
    kernel = me.kernel()
    try:
        # what the hub gave this server: its memory limit and numba cache
        mine["env"] = kernel.run("import os\nprint(os.environ.get('MEM_LIMIT'), "
                                 "os.environ.get('NUMBA_CACHE_DIR'))")["text"].split()
        mine["run"] = run_notebook(kernel, nb)
    finally:
        kernel.shutdown()
    if who.get("hands_in", True):
        mine["submit"] = me.assignment_action("submit", course, lesson)
        report["_accounts"][who["name"]] = me
    mine["formgrader_status"] = me.get("formgrader").status_code


def main(plan_file: str, report_file: str) -> int:
    plan = json.loads(Path(plan_file).read_text())
    report: dict[str, Any] = {"learners": {}, "instructor": {"commands": []}, "_accounts": {},
                              "errors": []}
    lesson, course = plan["lesson"], plan["course_id"]
    started = time.monotonic()
    phases = report["phases"] = {}

    def phase(name: str) -> None:  # seconds since the start, for the test's timings
        phases[name] = round(time.monotonic() - started, 1)

    # the learners log in, start their servers and pull the course while the instructor
    # prepares the assignment (as a class would); they fetch it once it is released. The
    # instructor's server starts first: the assignment is the class's critical path
    instructor_up, released = threading.Event(), threading.Event()
    threads = []
    for who in plan["learners"]:
        def work(who=who):
            try:
                learner_works(plan, who, report, instructor_up, released)
            except Exception as exc:  # reported, and the test fails on it
                report["errors"].append(f"{who['name']}: {type(exc).__name__}: {exc}")
        threads.append(threading.Thread(target=work))
    for thread in threads:
        thread.start()

    kernel = None
    try:
        teacher = Account(plan["hub"], plan["instructor"]["name"],
                          plan["instructor"]["password"])
        report["instructor"]["server_s"] = teacher.start_server()
        report["instructor"]["just_started"] = teacher.just_started
        instructor_up.set()
        phase("instructor's server")
        report["instructor"]["pull"] = teacher.git_pull(
            plan.get("instructor_repo", plan["repo"]), plan["branch"], "minigrad")[-1]
        report["instructor"]["formgrader_status"] = teacher.get("formgrader").status_code
        services = teacher.http.get(f"{teacher.hub}/hub/api/services", timeout=60)
        report["instructor"]["services"] = (services.json() if services.ok
                                            else services.status_code)
        kernel = teacher.kernel()
        commands = report["instructor"]["commands"]

        def nbgrader(*args: str) -> None:
            commands.append(instructor_runs(kernel, ["nbgrader", *args], "~/minigrad-grading"))

        commands.append(instructor_runs(
            kernel, [plan["python"], "minigrad/scripts/nbgrader_course.py", "course",
                     "minigrad-grading", lesson.split("_")[0]], "~"))
        nbgrader("generate_assignment", lesson)
        nbgrader("release_assignment", lesson)
        phase("released")
    finally:
        instructor_up.set()
        released.set()  # learners go on (and fail to fetch if the release failed)
        for thread in threads:
            thread.join()
        phase("handed in")
    try:
        nbgrader("collect", lesson)
        nbgrader("autograde", lesson)
        phase("autograded")
        # exporting the grades only reads the gradebook: in a second kernel (a second
        # terminal) while the feedback is made and released
        exporter = threading.Thread(target=lambda: report["instructor"].update(
            export=_in_a_kernel(teacher, ["nbgrader", "export"], "~/minigrad-grading")))
        exporter.start()
        nbgrader("generate_feedback", lesson)
        nbgrader("release_feedback", lesson)
        exporter.join()
        commands.append(report["instructor"].pop("export"))
        grades = teacher.get("api/contents/minigrad-grading/grades.csv?content=1&format=text")
        report["instructor"]["grades_csv"] = grades.json().get("content") if grades.ok else None
    finally:
        kernel.shutdown()

    def fetch_feedback(name: str, me: Account) -> None:
        mine = report["learners"][name]
        mine["fetch_feedback"] = me.assignment_action("fetch_feedback", course, lesson)
        listing = me.read(f"{lesson}/feedback")["content"]
        mine["feedback"] = [f["path"] for stamp in listing
                            for f in me.read(stamp["path"])["content"]]

    fetching = [threading.Thread(target=fetch_feedback, args=item)
                for item in report["_accounts"].items()]
    for thread in fetching:
        thread.start()
    for thread in fetching:
        thread.join()
    del report["_accounts"]
    phase("feedback fetched")
    Path(report_file).write_text(json.dumps(report, indent=1))
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
