# Two commands for people (see README):  make run   and   make test
# Each one sets everything up first: a pinned uv in .tools/, then the locked
# environment in .venv/ (uv sync --frozen: exactly what uv.lock says).

PYTHON ?= python3
UV_VERSION := 0.13.8
TOOLS := .tools
UV := $(TOOLS)/bin/uv
export UV_PYTHON_DOWNLOADS := never
export UV_LINK_MODE := copy
# A first build of llama-cpp-python takes minutes; a second `make` (another
# checkout) waits for it rather than failing after uv's default lock timeout.
export UV_LOCK_TIMEOUT := 3600
# Byte code for every installed package at install time, as pip does by default: where
# PYTHONDONTWRITEBYTECODE is set (containers, CI images, this project's machines),
# Python never writes .pyc files itself, and every `mama` process compiled numpy,
# pydantic and the rest from source again (about half of a command's start).
export UV_COMPILE_BYTECODE := 1

.PHONY: run test setup lint typecheck pytest clean bundle bundle-test

VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml | head -n 1)
ARCHIVE := dist/mama-$(VERSION)-linux-$(shell uname -m).tar.gz

run: setup
	.venv/bin/mama

test: setup lint typecheck pytest

# uv is given the interpreter itself (sys.executable), not the path of the command:
# a pyenv shim (~/.pyenv/shims/python3) is a shell script, which uv never finds equal
# to the interpreter .venv was made from, so it removed and rebuilt .venv on every run.
#
# llama-cpp-python is source only (it compiles llama.cpp, about 7 minutes), and uv
# compiled it again for every checkout sharing its cache. So uv installs the rest and
# packaging/llama_wheel.py installs the wheel built once per machine (in
# ~/.cache/mama/wheels, keyed by version, CPU and build flags), building it only
# when no checkout here has.
setup: $(UV)
	$(UV) sync --frozen --no-install-package llama-cpp-python \
	  --python "$$($(PYTHON) -c 'import sys; print(sys.executable)')"
	$(TOOLS)/bin/python packaging/llama_wheel.py ensure --uv $(UV) --venv .venv

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

lint:
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

typecheck:
	.venv/bin/pyright mama_core app

# One worker per core (pytest-xdist): most tests wait on a subprocess (the CLI, Claude
# Code, Xvfb, a fake server), so a second worker fills the wait. --dist loadscope keeps
# each module on one worker: its module-scoped fixtures are built once (the suite took
# 13:22 so and 15:57 with --dist worksteal, which splits modules). --max-worker-restart=0:
# in pytest-xdist 3.8.0, when a worker crashes (a segfault, pytest-timeout's kill),
# loadscope re-queues the dead worker's finished modules as empty work and, with a
# replacement worker, the run hung until CI's limit (pytest-xdist #1378, open). Without
# a replacement the crash is reported and the other worker stops after its current test:
# the run fails at once instead (what was not run yet is not run; a crash is red anyway).
#
# Our own packages' byte code first, for the same reason as UV_COMPILE_BYTECODE above:
# the tests start hundreds of `mama`, tray and fake-server processes (compileall skips
# what is up to date; `python -m` and editable installs read __pycache__ like any other).
pytest:
	.venv/bin/python -m compileall -q -j 0 mama_core app ui tests bench
	QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest -n auto --dist loadscope --max-worker-restart=0 --durations=25

# The installable app: a PyInstaller one-folder bundle (dist/mama/) and its archive.
bundle: setup
	rm -rf dist/mama $(ARCHIVE)
	.venv/bin/pyinstaller --noconfirm --log-level WARN --distpath dist \
	  --workpath build/pyinstaller packaging/mama.spec
	cp packaging/install.sh packaging/uninstall.sh dist/mama/
	tar -C dist -czf $(ARCHIVE) mama
	.venv/bin/python packaging/bundle_report.py dist/mama $(ARCHIVE)

# Unpack the archive somewhere else and use it as a person would (packaging/tests).
bundle-test: bundle
	MAMA_BUNDLE_ARCHIVE=$(abspath $(ARCHIVE)) .venv/bin/python -m pytest packaging/tests -p no:randomly -q

clean:
	rm -rf .venv $(TOOLS) build dist
