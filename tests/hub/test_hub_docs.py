"""The instructor guide shows the hub's configuration and set-up that tests/hub/test_hub.py
runs: the configuration in the guide is the file, and the install script is valid shell."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "instructor.md"
HUB = ROOT / "docs" / "hub"


def test_the_guide_shows_the_tested_hub_configuration():
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    config = (HUB / "jupyterhub_config.py").read_text()
    assert config in blocks


def test_the_guide_points_at_the_install_script_and_the_configuration():
    text = GUIDE.read_text()
    assert "sudo docs/hub/install.sh" in text
    assert "-f docs/hub/jupyterhub_config.py" in text


def test_the_install_script_is_valid_shell():
    subprocess.run(["bash", "-n", str(HUB / "install.sh")], check=True)


def test_the_proxy_is_pinned_by_a_lock_file():
    lock = (HUB / "proxy" / "package-lock.json").read_text()
    assert '"node_modules/configurable-http-proxy"' in lock and '"integrity"' in lock
