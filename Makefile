# Two commands set up a fresh machine: `make demo` (main job) and `make test` (test suite).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEBIAN_PACKAGES := dict-foldoc dict-gcide wordnet-base python3.11-doc chromium chromium-driver

.PHONY: install demo test bench clean debian web

WEB_STAMP := sidelight/web/assets/.built

install: $(STAMP) debian web

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,bench,adapt,ray,pdf]'
	touch $(STAMP)

# FOLDOC and WordNet (and Chromium + its driver for the lab-page browser test) come from Debian packages;
# install them when root, else say how.
debian:
	@missing=""; for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = "0" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  (apt-get install -y -qq $$missing >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq $$missing)) ; \
	else \
	  echo "FOLDOC/WordNet need Debian packages:$$missing. Run: sudo apt-get install -y$$missing"; \
	fi

# The exported page's scripts (`sidelight export-web`): onnxruntime-web and esbuild from the npm registry
# (versions pinned in web/package-lock.json), bundled into sidelight/web/assets/.
web: $(WEB_STAMP)

$(WEB_STAMP): web/package.json web/package-lock.json web/build.mjs $(wildcard web/src/*.js web/src/*.css)
	@if command -v npm >/dev/null 2>&1; then \
	  cd web && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error && node build.mjs && touch ../$(WEB_STAMP); \
	else \
	  echo "sidelight export-web needs Node.js and npm to build its page (sudo apt-get install -y nodejs npm)"; \
	fi

demo: install
	$(BIN)/python -m sidelight.demo

test: install
	$(BIN)/lint-imports --no-cache
	$(BIN)/ruff check sidelight tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/python bench/lexical.py --json bench/results/lexical.json

clean:
	rm -rf $(VENV) .cache web/node_modules sidelight/web/assets
