# The two commands of the README: `make lab` opens the course, `make test` runs every check.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
SITE_STAMP := $(VENV)/.installed-site-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

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

.PHONY: lab test install lint host bench learner site clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -qq --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -qq -e ".[course,test]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

install: $(STAMP)

# The project's JupyterLab settings (lab-settings/overrides.json: no news pop-up, no update
# checks) and the start notebook opened; e.g. make lab LAB_ARGS=--no-browser
LAB_SETTINGS := $(CURDIR)/lab-settings
LAB_START    := 00_start_here.ipynb
LAB_ARGS     ?=

lab: install
	$(BIN)/python -m minigrad.warmup
	$(BIN)/jupyter lab --ServerApp.root_dir=notebooks \
	    --LabApp.default_url=/lab/tree/$(LAB_START) \
	    --LabApp.app_settings_dir="$(LAB_SETTINGS)" $(LAB_ARGS)

# The static course site, built offline from the notebooks' stored outputs, with every
# stepper as a frame player: build/site/html/index.html. Its tools are the `site` extra,
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
test: host lint site
	$(BIN)/python scripts/make_learner_notebooks.py --check --execute
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
