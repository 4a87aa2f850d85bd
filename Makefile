# Two commands for people (see README):  make run   and   make test
# Each one sets everything up first: a pinned uv in .tools/, then the locked
# environment in .venv/ (uv sync --frozen: exactly what uv.lock says).

PYTHON ?= python3
UV_VERSION := 0.13.8
TOOLS := .tools
UV := $(TOOLS)/bin/uv
export UV_PYTHON_DOWNLOADS := never
export UV_LINK_MODE := copy

.PHONY: run test setup lint typecheck pytest clean

run: setup
	.venv/bin/mama

test: setup lint typecheck pytest

# uv is given the interpreter itself (sys.executable), not the path of the command:
# a pyenv shim (~/.pyenv/shims/python3) is a shell script, which uv never finds equal
# to the interpreter .venv was made from, so it removed and rebuilt .venv on every run.
setup: $(UV)
	$(UV) sync --frozen --python "$$($(PYTHON) -c 'import sys; print(sys.executable)')"

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

lint:
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

typecheck:
	.venv/bin/pyright mama_core app

pytest:
	QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest

clean:
	rm -rf .venv $(TOOLS)
