# JupyterHub's configuration for a class taking the minigrad course, on one machine with
# local accounts (docs/instructor.md, "JupyterHub for a class"). It expects the course
# installed by docs/hub/install.sh, and is the file tests/hub/test_hub.py starts a hub
# with. Start the hub as root (it starts each learner's server as that learner):
#
#     sudo /opt/minigrad-hub/env/bin/jupyterhub -f docs/hub/jupyterhub_config.py
#
# What changes from one machine to another is read from the environment; the defaults are
# those of install.sh:
#   MINIGRAD_HUB_PREFIX       where install.sh installed the course (/opt/minigrad-hub)
#   MINIGRAD_HUB_STATE        the hub's database and cookie secret (/srv/minigrad-hub)
#   MINIGRAD_HUB_INSTRUCTORS  instructors' user names, comma-separated (instructor)
#   MINIGRAD_HUB_LEARNERS     learners' user names, comma-separated (empty: every local
#                             account may log in)
#   MINIGRAD_HUB_URL          where the hub listens (http://:8000; put TLS in front of it,
#                             or set c.JupyterHub.ssl_cert / ssl_key)
#   MINIGRAD_HUB_IDLE_S       seconds after which an idle server is stopped (3600)
import os
import pwd
import shutil
from pathlib import Path

c = get_config()  # noqa: F821 (JupyterHub defines get_config)

PREFIX = Path(os.environ.get("MINIGRAD_HUB_PREFIX", "/opt/minigrad-hub"))
STATE = Path(os.environ.get("MINIGRAD_HUB_STATE", "/srv/minigrad-hub"))
ENV = PREFIX / "env"
INSTRUCTORS = {n for n in os.environ.get("MINIGRAD_HUB_INSTRUCTORS", "instructor").split(",")
               if n}
LEARNERS = {n for n in os.environ.get("MINIGRAD_HUB_LEARNERS", "").split(",") if n}
IDLE_S = int(os.environ.get("MINIGRAD_HUB_IDLE_S", "3600"))

# -- the hub -------------------------------------------------------------------------------
c.JupyterHub.bind_url = os.environ.get("MINIGRAD_HUB_URL", "http://:8000")
c.JupyterHub.hub_port = int(os.environ.get("MINIGRAD_HUB_API_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:" + os.environ.get(
    "MINIGRAD_HUB_PROXY_API_PORT", "8001")
c.ConfigurableHTTPProxy.command = [str(PREFIX / "proxy/node_modules/.bin/configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")

# -- who may log in: local accounts and their passwords (PAM, JupyterHub's default) --------
c.JupyterHub.authenticator_class = "pam"
c.Authenticator.admin_users = INSTRUCTORS
if LEARNERS:
    c.Authenticator.allowed_users = LEARNERS | INSTRUCTORS
else:
    c.Authenticator.allow_all = True  # every local account (PAM checks the password)

# -- each learner's server: their own account, the course's environment -------------------
c.Spawner.cmd = [str(ENV / "bin/jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# A kernel idle for 20 minutes is shut down: a learner who opened every lesson would
# otherwise keep 13 kernels of about 260 MB each.
c.Spawner.args = ["--MappingKernelManager.cull_idle_timeout=1200",
                  "--MappingKernelManager.cull_interval=120"]
# Memory per learner: about 160 MB for the server and 260-450 MB per running lesson
# (docs/instructor.md, "Sizing"). LocalProcessSpawner only passes these on (MEM_LIMIT in
# the server's environment, shown by jupyter-resource-usage); SystemdSpawner and
# KubeSpawner enforce them.
c.Spawner.mem_guarantee = "512M"
c.Spawner.mem_limit = "1G"

# numba compiles minigrad's kernels on first use (10 s and more for lesson 1) and caches
# them in a folder it can write to. install.sh compiled them once into PREFIX/numba-cache;
# each learner's server starts with a copy of that cache in ~/.cache/numba (numba does not
# use a cache folder it cannot write to, so a shared read-only one does not help).
NUMBA_CACHE = PREFIX / "numba-cache"


def _seed_numba_cache(home: Path, uid: int, gid: int) -> None:
    target = home / ".cache" / "numba"
    if not NUMBA_CACHE.is_dir() or target.exists():
        return  # a learner's own cache is theirs: it is never overwritten
    shutil.copytree(NUMBA_CACHE, target)
    for path in [home / ".cache", target, *target.rglob("*")]:
        os.chown(path, uid, gid)


def pre_spawn_hook(spawner) -> None:
    """Before a server starts: its numba cache, and the instructor's extra configuration
    (nbgrader's formgrader, which learners do not get)."""
    account = pwd.getpwnam(spawner.user.name)
    home = Path(account.pw_dir)
    (home / ".cache").mkdir(exist_ok=True)
    os.chown(home / ".cache", account.pw_uid, account.pw_gid)
    _seed_numba_cache(home, account.pw_uid, account.pw_gid)
    spawner.environment["NUMBA_CACHE_DIR"] = str(home / ".cache" / "numba")
    if spawner.user.name in INSTRUCTORS:
        spawner.environment["JUPYTER_CONFIG_PATH"] = str(PREFIX / "instructor-config")


c.Spawner.pre_spawn_hook = pre_spawn_hook

# -- stop servers nobody uses (each keeps its memory until stopped) -----------------------
c.JupyterHub.load_roles = [{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": [str(ENV / "bin/python"), "-m", "jupyterhub_idle_culler",
                f"--timeout={IDLE_S}", "--cull-every=300"],
}]
