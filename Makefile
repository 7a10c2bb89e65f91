# The two commands of the README: `make lab` opens the course, `make test` runs every check.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PYPROJECT_SUM := $(shell cat pyproject.toml | cksum | cut -d' ' -f1)
STAMP      := $(VENV)/.installed-$(PYPROJECT_SUM)
SITE_STAMP := $(VENV)/.installed-site-$(PYPROJECT_SUM)
TEST_STAMP := $(VENV)/.installed-test-$(PYPROJECT_SUM)
# PyTorch for the parity tests and the lessons' "same code, real PyTorch" cells: always this
# release, and the CPU build (PyPI's Linux wheel pulls several GB of CUDA libraries).
TORCH_PIN   := torch==2.13.0
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

# git keeps no empty folders: only name the ones this checkout has.
LINT_PATHS := $(wildcard minigrad widgets tests benchmarks scripts examples docs/site)
NOTEBOOKS  := $(wildcard notebooks)
# extra pytest arguments, e.g. make test PYTEST_ARGS='-m "not browser" -x'
PYTEST_ARGS ?=
# pytest-xdist workers: auto is one per core; PYTEST_WORKERS=0 runs the tests in this process
# (what --pdb needs). --dist loadfile keeps each file on one worker: nbval runs a lesson's
# cells in order in one kernel, and module fixtures (the nbgrader round trip) run once.
PYTEST_WORKERS ?= auto

export PIP_DISABLE_PIP_VERSION_CHECK := 1
export PIP_NO_INPUT := 1
# Running the solved lessons (nbval, the site) must not mark exercises solved in the
# developer's own progress file (`make lab` keeps the learner's).
test site: export MINIGRAD_COURSE_PROGRESS := off
# The tests keep both cores busy: no helper process compiling a lesson's kernels ahead
# (minigrad/kernels/ahead.py; its own tests turn it back on).
test site: export MINIGRAD_COMPILE_AHEAD := off

.PHONY: lab test install test-install lint host bench learner site clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -qq --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -qq -e ".[course,test]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

install: $(STAMP)

# What `make test` needs besides the course: PyTorch (pinned, CPU) and the `nbgrader` extra.
# PyTorch itself comes from PyTorch's CPU index, then its dependencies from PyPI. If it
# cannot be installed (no wheel for this Python, no network), the tests that need it skip,
# and this says so in one line; the stamp is not written, so the next `make test` retries.
$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install -qq -e ".[nbgrader]"
	@if $(BIN)/pip install -qq --retries 1 --no-deps --index-url "$(TORCH_INDEX)" "$(TORCH_PIN)" \
	    && $(BIN)/pip install -qq "$(TORCH_PIN)"; then \
	    touch $(TEST_STAMP); \
	else \
	    echo "make test: $(TORCH_PIN) could not be installed: the parity tests and the lessons' PyTorch cells are skipped" >&2; \
	fi

test-install: $(TEST_STAMP)

# The project's JupyterLab settings (lab-settings/overrides.json: no news pop-up, no update
# checks) and the start notebook opened; e.g. make lab LAB_ARGS=--no-browser. JupyterLab
# opens the learner's own copies of the lessons (LAB_DIR, which git ignores: working
# through the course never edits the repository's notebooks); an instructor opens the
# solved ones with make lab LAB_DIR=notebooks.
LAB_SETTINGS := $(CURDIR)/lab-settings
LAB_DIR      ?= my-lessons
LAB_START    ?= 00_start_here.ipynb
LAB_ARGS     ?=
# Jupyter refuses to start as root unless told to: containers and cloud machines run as root.
LAB_AS_ROOT  := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: install
	$(BIN)/python -m minigrad.warmup
	$(BIN)/python scripts/lab_workspace.py my-lessons
	$(BIN)/jupyter lab --ServerApp.root_dir=$(LAB_DIR) \
	    --LabApp.default_url=/lab/tree/$(LAB_START) \
	    --LabApp.app_settings_dir="$(LAB_SETTINGS)" $(LAB_AS_ROOT) $(LAB_ARGS)

# The static course site, built offline from the notebooks' stored outputs, with every
# stepper drawn from its saved state: build/site/html/index.html. Its tools are the `site` extra,
# installed here only (the course itself does not need them).
$(SITE_STAMP): $(STAMP)
	$(BIN)/pip install -qq -e ".[site]"
	touch $(SITE_STAMP)

site: $(SITE_STAMP)
	$(BIN)/python docs/site/build.py

lint: install
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/lint-imports

# Which processor and which PyTorch kernels a run used: some float32 results depend on them.
host: install
	@$(BIN)/python scripts/host_info.py

# pytest exits 5 when it collected no tests: that is a failure here, never a pass.
# Chromium is the one thing `make test` cannot install (it comes from Debian, not PyPI).
test: test-install host lint site
	@[ -x "$${MINIGRAD_CHROMIUM:-/usr/bin/chromium}" ] || echo "make test: no Chromium at /usr/bin/chromium: the browser tests are skipped (sudo apt-get install chromium runs them)" >&2
	$(BIN)/python scripts/make_learner_notebooks.py --check
	$(BIN)/python -m pytest tests $(NOTEBOOKS) --ignore=notebooks/learner \
	    --nbval-lax --nbval-sanitize-with tests/nbval_sanitize.cfg \
	    -p no:cacheprovider -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS) \
	  || { status=$$?; \
	       if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests" >&2; fi; \
	       exit $$status; }

bench: install
	$(BIN)/python -m benchmarks

learner: install
	$(BIN)/python scripts/make_learner_notebooks.py --execute

clean:
	rm -rf $(VENV) build *.egg-info
