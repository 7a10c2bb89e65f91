"""The course's build: setuptools (configured in pyproject.toml), with the answer key sealed.

A built package (a wheel, ``pip install .``, docs/hub/install.sh) is what learners get, so
its exercise banks hold seals of the answers instead of the answers: see
scripts/seal_answers.py. An editable install (``make install``) is the instructor's and
keeps the plain banks.
"""

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildWithSealedKey(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        spec = importlib.util.spec_from_file_location(
            "seal_answers", HERE / "scripts" / "seal_answers.py")
        seal_answers = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(seal_answers)
        seal_answers.seal_package(Path(self.build_lib) / "widgets",
                                  HERE / "scripts" / "answer_key.json")


setup(cmdclass={"build_py": BuildWithSealedKey})
