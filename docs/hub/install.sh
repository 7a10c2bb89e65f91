#!/usr/bin/env bash
# Install the minigrad course for a JupyterHub on one machine (docs/instructor.md,
# "JupyterHub for a class"); docs/hub/jupyterhub_config.py runs the hub on it. Run as root,
# from a checkout at the commit learners will pull:
#
#     sudo docs/hub/install.sh
#
# Settings (environment variables, with their defaults):
#   PREFIX=/opt/minigrad-hub            the course's environment, proxy and kernel cache
#   EXCHANGE=/srv/nbgrader/exchange     nbgrader's exchange, shared by every account
#   COURSE_ID=minigrad                  nbgrader's course id
#   PYTHON=python3                      a Python every account can run (not one under /root)
#   WARM_LESSONS="00 01 ... 12"         lessons whose kernels are compiled now
# It can be run again after `git pull`: it reinstalls the course and compiles again.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PREFIX=${PREFIX:-/opt/minigrad-hub}
EXCHANGE=${EXCHANGE:-/srv/nbgrader/exchange}
COURSE_ID=${COURSE_ID:-minigrad}
PYTHON=${PYTHON:-python3}
WARM_LESSONS=${WARM_LESSONS:-$(cd "$REPO/notebooks" && ls [0-9][0-9]_*.ipynb | cut -c1-2 | tr '\n' ' ')}
ENV=$PREFIX/env
umask 022
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

echo "== the course's environment: $ENV"
mkdir -p "$PREFIX"
[ -x "$ENV/bin/python" ] || "$PYTHON" -m venv "$ENV"
chmod -R u+w "$ENV"
# The course built once as a wheel: what learners get holds the answer key sealed (no
# answers, see scripts/seal_answers.py). Then nbgrader and the hub's packages (pinned in
# pyproject.toml's extras), and the course itself again (pip keeps an older copy of 0.1.0)
WHEELS=$(mktemp -d)
trap 'rm -rf "$WHEELS"' EXIT  # (also when a step fails or the script is stopped)
"$ENV/bin/pip" wheel -q --no-deps -w "$WHEELS" "$REPO"
WHEEL=$(ls "$WHEELS"/*.whl)
"$ENV/bin/pip" install -qq "$WHEEL[course,nbgrader,hub]"
"$ENV/bin/pip" install -qq --no-deps --force-reinstall "$WHEEL"
rm -rf "$WHEELS"

echo "== JupyterHub's proxy (npm)"
mkdir -p "$PREFIX/proxy"
cp "$REPO/docs/hub/proxy/package.json" "$REPO/docs/hub/proxy/package-lock.json" "$PREFIX/proxy/"
npm ci --prefix "$PREFIX/proxy" --prefer-offline --no-audit --no-fund --loglevel=error

echo "== Jupyter's settings for everyone (learners) and for instructors"
JUPYTER=$ENV/bin/jupyter
# learners get the assignment list (fetch, submit, feedback), not the formgrader
"$JUPYTER" server extension disable --sys-prefix nbgrader.server_extensions.formgrader >/dev/null
"$JUPYTER" server extension disable --sys-prefix nbgrader.server_extensions.course_list >/dev/null
"$JUPYTER" labextension disable --level=sys_prefix @jupyter/nbgrader:formgrader \
    @jupyter/nbgrader:create-assignment @jupyter/nbgrader:course-list >/dev/null
# instructors: the hub's pre_spawn_hook adds this folder to their JUPYTER_CONFIG_PATH
INSTRUCTOR=$PREFIX/instructor-config
mkdir -p "$INSTRUCTOR/labconfig"
cat >"$INSTRUCTOR/jupyter_server_config.json" <<'JSON'
{"ServerApp": {"jpserver_extensions": {
  "nbgrader.server_extensions.formgrader": true,
  "nbgrader.server_extensions.course_list": true}}}
JSON
cat >"$INSTRUCTOR/labconfig/page_config.json" <<'JSON'
{"disabledExtensions": {"@jupyter/nbgrader:formgrader": false,
  "@jupyter/nbgrader:create-assignment": false, "@jupyter/nbgrader:course-list": false}}
JSON
# nbgrader's course id and exchange, for every account's server and command line
cat >"$ENV/etc/jupyter/nbgrader_config.py" <<PY
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "$COURSE_ID"
c.Exchange.root = "$EXCHANGE"
PY
# the course's JupyterLab settings (no news pop-up, no update check)
mkdir -p "$ENV/share/jupyter/lab/settings"
cp "$REPO/lab-settings/overrides.json" "$ENV/share/jupyter/lab/settings/"

echo "== nbgrader's exchange: $EXCHANGE (every account writes to it)"
mkdir -p "$EXCHANGE"
chmod 0777 "$EXCHANGE"

echo "== minigrad's kernels, compiled once into $PREFIX/numba-cache (lessons $WARM_LESSONS)"
rm -rf "$PREFIX/numba-cache" "$PREFIX/warm-up"
mkdir -p "$PREFIX/warm-up"
for number in $WARM_LESSONS; do
    cp "$REPO"/notebooks/"$number"_*.ipynb "$PREFIX/warm-up/"
done
(cd "$PREFIX/warm-up" && NUMBA_CACHE_DIR="$PREFIX/numba-cache" MINIGRAD_COURSE_PROGRESS=off \
    HOME="$PREFIX/warm-up" "$JUPYTER" nbconvert --to notebook --execute --inplace \
    --ExecutePreprocessor.timeout=1200 ./*.ipynb 2>&1 | grep -v '^\[NbConvertApp\]' || true)
rm -rf "$PREFIX/warm-up"
[ -d "$PREFIX/numba-cache" ] || { echo "no kernel was compiled" >&2; exit 1; }

echo "== read-only for everyone but root"
chown -R root:root "$ENV" "$PREFIX/numba-cache" "$PREFIX/proxy" "$INSTRUCTOR"
chmod -R a+rX,go-w "$PREFIX"
chmod -R a-w "$ENV/lib"
echo "installed in $PREFIX; start the hub with:"
echo "  MINIGRAD_HUB_PREFIX=$PREFIX $ENV/bin/jupyterhub -f $REPO/docs/hub/jupyterhub_config.py"
