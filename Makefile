# Two commands do everything on a fresh machine:
#   make demo   install, start local PostgreSQL+pgvector and Neo4j, ingest the bundled samples
#               (samples/: md, txt, html, pdf, docx) and answer a search
#   make test   install, then run the whole test suite against real local servers (the docs checks too)
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install demo lint test docs down clean

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/graphrag services up
	$(BIN)/graphrag ingest samples --collection samples
	$(BIN)/graphrag status
	$(BIN)/graphrag search "Who invented the transistor, and where?" --collection samples -k 3 --explain

lint: install
	$(BIN)/ruff check graphrag tests bench scripts
	$(BIN)/mypy

# pytest exits 5 when it collects no test; that is not a failure of the suite.
test: install lint
	$(BIN)/python -m pytest $(PYTEST_ARGS); rc=$$?; if [ $$rc -eq 5 ]; then exit 0; else exit $$rc; fi

# The documentation site, built strictly (broken links or anchors fail); tests/unit/test_docs.py runs the same
# build, checks the generated reference pages and the code blocks, so `make test` covers the docs too.
docs: install
	$(BIN)/mkdocs build --strict

down:
	$(BIN)/graphrag services down

clean: down
	rm -rf .graphrag .graphrag-test
