# Quick start:  make book   (set-up, execute every page, render the book; WORKERS=1: serial)
#               make test   (set-up, unit tests, smoke-run every page, nbval, book build)
#               make mutation (mutation testing of the core modules: bench/mutation.json)
PYTHON   ?= python3
VENV     ?= .venv
BIN      := $(VENV)/bin
PY       := $(BIN)/python
STAMP    := $(VENV)/.installed
PROFILE  ?= cpu
DEVICE   ?= auto
# Pages (and their runs) at a time: one a CPU. Above 1 they run as Ray tasks, one thread each
# (book/execute.py --workers); on the 2-core development machine that took the cpu book from
# about 60 min serial to 43. WORKERS=1: serial, no Ray.
WORKERS  ?= $(shell nproc 2>/dev/null || echo 1)
# Where data sets live (also read from PUSUPPORT_DATA by the package). `make data`
# fills it from ../shared/datasets when that folder exists (development and CI machines).
DATA_DIR ?= $(CURDIR)/data
SHARED   ?= $(CURDIR)/../shared/datasets
# Debian's dataset-fashion-mnist package, used when installed.
FMNIST   ?= /usr/share/datasets/fashion-mnist
MATHJAX  := book/_static/mathjax/tex-chtml.js
# glibc's allocator keeps freed memory for reuse instead of unmapping it and mapping (and
# zeroing) it again at the next batch: a `cpu` CNN epoch spent a sixth of its time in the
# kernel's page faults, and its pages run about 15 % faster (the same numbers, ~20 % more
# peak memory; DEVELOPING.md, "Benchmark"). Every target's processes inherit it (Ray's
# workers and the pages' kernels too); other C libraries ignore it.
export GLIBC_TUNABLES ?= glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=17179869184
SMOKE    := build/smoke

.PHONY: setup data book commit-runs same-numbers standing-record check-runs spread results test bench readme mutation clean

setup: $(STAMP) $(MATHJAX)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -e '.[book,dev,cluster]'
	touch $@

# MathJax 3 served from the book itself, so maths renders without internet.
$(MATHJAX):
	rm -rf build/mathjax && mkdir -p build/mathjax book/_static/mathjax/output/chtml
	cd build/mathjax && npm pack --silent mathjax@3 >/dev/null && tar -xzf mathjax-3*.tgz
	cp -r build/mathjax/package/es5/output/chtml/fonts book/_static/mathjax/output/chtml/
	cp build/mathjax/package/es5/tex-chtml.js $@

data:
	@mkdir -p $(DATA_DIR)
	@if [ -d "$(SHARED)" ]; then \
	  for a in cifar10-jpeg 20news-bydate; do \
	    if [ -f "$(SHARED)/$$a.tar.gz" ] && [ ! -e "$(DATA_DIR)/.$$a.extracted" ]; then \
	      echo "extracting $$a into $(DATA_DIR)"; \
	      tar -xzf "$(SHARED)/$$a.tar.gz" -C "$(DATA_DIR)" && touch "$(DATA_DIR)/.$$a.extracted"; \
	    fi; \
	  done; \
	fi
	@if [ -d "$(FMNIST)" ] && [ ! -e "$(DATA_DIR)/FashionMNIST/raw/train-labels-idx1-ubyte.gz" ]; then \
	  mkdir -p "$(DATA_DIR)/FashionMNIST/raw" && cp "$(FMNIST)"/*.gz "$(DATA_DIR)/FashionMNIST/raw/"; \
	fi

book: setup data
	PUSUPPORT_DATA=$(DATA_DIR) $(PY) book/execute.py --profile $(PROFILE) --device $(DEVICE) \
	  --workers $(WORKERS) --data-dir $(DATA_DIR) --book-dir book --output-dir results \
	  $(if $(FRESH),--fresh)
	$(PY) -m pytest -q -m book -k "residue and cpu" -p no:cacheprovider tests/test_book.py
	@echo "book: $(CURDIR)/book/_build/html/index.html"

# The runs `make book` trained (results/runs), committed with the book under
# results/reference/$(PROFILE)/runs: the next build, here or on another machine, reads them
# (and says so on each page) instead of training; FRESH=1 on `make book` reads none.
commit-runs: setup
	$(PY) book/commit_runs.py --store results/runs --profile $(PROFILE)

# After a change to the training code that should not change a number (a refactor): every
# committed runs folder keeps each method's runs of older code — read as today's — where the
# reference suite's runs that method reaches give the same numbers at the commit that trained
# them and here (results/reference/**/runs/same_numbers.json, committed); the rest are named.
same-numbers: setup
	$(PY) book/commit_runs.py --same-numbers

# The standing page's record at the paper's scale (its RECORD: every method on the synthetic
# task, 10 seeds; about an hour on 2 cores, resumable): trained into build/standing-record,
# then its runs committed under results/reference/paper/<RECORD>/runs, which every build of
# the page reads.
STANDING = $(PY) -c 'import sys; from pusupport.book.experiments import standing; print(getattr(standing, sys.argv[1]))'
standing-record: setup data
	PUSUPPORT_DATA=$(DATA_DIR) $(PY) book/execute.py --profile paper --device $(DEVICE) \
	  --only standing --set "compared=$$($(STANDING) RECORD_COMPARED)" --workers $(WORKERS) \
	  --data-dir $(DATA_DIR) --book-dir build/standing-record/book \
	  --output-dir build/standing-record/results --no-build
	$(PY) book/commit_runs.py --store build/standing-record/results/runs --profile paper \
	  --record $$($(STANDING) RECORD)

# The book built into build/check with PUSUPPORT_CHECK set: each page trains again the first
# run of each method it would read from the committed runs (one seed where seeds train one by
# one), on one thread as `make book` trains, and reads the rest; each run trained again is
# held against the committed one: equal number for number where trained on the same CPU,
# precision and threads; elsewhere within one seed's committed spread or beyond it.
check-runs: setup data
	rm -rf build/check
	PUSUPPORT_CHECK=1 PUSUPPORT_DATA=$(DATA_DIR) $(ONE_THREAD) $(PY) book/execute.py --profile $(PROFILE) \
	  --device $(DEVICE) --workers 1 --data-dir $(DATA_DIR) --book-dir build/check/book \
	  --output-dir build/check/results --no-build
	$(PY) book/commit_runs.py --check --store build/check/results/runs --profile $(PROFILE)

# The run-to-run spread of each data set's aaPU-vs-nnPU comparison at PROFILE: its page run
# again with 2 threads against `make book`'s results (one thread per Ray task); written to
# results/reference/$(PROFILE)/spread.json (committed), shown on the summary page.
spread: setup data
	PUSUPPORT_DATA=$(DATA_DIR) TQDM_DISABLE=1 $(PY) book/spread.py --reference results \
	  --profile $(PROFILE) --data-dir $(DATA_DIR) --threads 2 --reference-threads 1

# Pages run at a profile (PAGES=…, e.g. PROFILE=paper) on some seeds (SEEDS=2,3; default:
# all the page plans) and committed with provenance as one part of
# results/reference/$(PROFILE)/<page>/, shown by the book beside its live run; resumable
# (the paper profile checkpoints every run under build/results). SHARE=N: N processes train
# at once on this machine's one device. IMPORT=FOLDER commits runs trained elsewhere.
comma := ,
results: setup data
	@test -n "$(PAGES)" || { echo "name the pages: make results PAGES=real_20news PROFILE=paper"; exit 2; }
	PUSUPPORT_DATA=$(DATA_DIR) $(PY) book/results.py --pages $(PAGES) --profile $(PROFILE) \
	  --device $(DEVICE) --share $(or $(SHARE),1) --data-dir $(DATA_DIR) \
	  $(if $(SEEDS),--seeds $(subst $(comma), ,$(SEEDS))) $(if $(IMPORT),--import-part $(IMPORT))

# The layers and the import graph (import-linter: pyproject.toml), unit tests (two
# processes of one thread each, a test file to a process — the `paper` dry run in two halves,
# one to each (tests/conftest.py) — 2 threads each oversubscribe the
# 2 cores: 18.6 min against 9.8 on a fresh clone), then every page in the `smoke` profile
# and a book build, two pages at a time with Ray as `make book` runs them, then the checks on
# that build (tests marked `book`, two processes: one runs five pages again serially, one of
# each kind of job, in two groups side by side, and must get the same results) and nbval on
# the executed pages, two notebooks at a time, each notebook's cells in order in one kernel
# (`--dist loadscope`). nbval's run is the book built a second time into the same output
# folder, so it must train nothing: every run is in the run store; tests/no_training (on
# PYTHONPATH) makes any training fail. The pages run one thread per process, as each Ray
# task does: a convolution's gradients differ in the last bits with the number of threads.
ONE_THREAD := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
test: export TQDM_DISABLE = 1
test: export PUSUPPORT_DATA = $(DATA_DIR)
test: export SMOKE_BOOK = $(CURDIR)/$(SMOKE)
test: setup data
	$(BIN)/lint-imports
	$(ONE_THREAD) $(PY) -m pytest -m "not book" -n 2 --dist loadscope --no-loadscope-reorder tests
	rm -rf $(SMOKE)
	$(ONE_THREAD) $(PY) book/execute.py --profile smoke --workers 2 --data-dir $(DATA_DIR) \
	  --book-dir $(SMOKE) --output-dir $(SMOKE)/results
	$(ONE_THREAD) $(PY) -m pytest -m book -n 2 tests
	PYTHONPATH=$(CURDIR)/tests/no_training $(ONE_THREAD) $(PY) -m pytest -n 2 --dist loadscope --nbval-lax \
	  --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider $(SMOKE)/pages

# Speed and memory benchmark (not a test): writes bench/results.json; DEVICE=cuda: the GPU
# benchmark of layouts (bench/gpu.py, ≤ 5 min on one GPU), bench/results-cuda.json.
bench: setup data
	PUSUPPORT_DATA=$(DATA_DIR) TQDM_DISABLE=1 $(PY) \
	  $(if $(filter cuda,$(DEVICE)),bench/gpu.py --device cuda,bench/run.py --data-dir $(DATA_DIR))

# The README's answer, rewritten from the committed paper-scale records (`make test` fails
# while the README says other numbers than they do).
readme: setup
	$(PY) book/readme.py

# Mutation testing (not a test): each core module against its own fast tests, one
# core, with mutmut 3 (the `mutation` extra); writes bench/mutation.json.
mutation: export OMP_NUM_THREADS = 1
mutation: export MKL_NUM_THREADS = 1
mutation: export TQDM_DISABLE = 1
mutation: setup
	$(PY) -c "import importlib.metadata as m; assert m.version('mutmut') == '3.8.1'" 2>/dev/null \
	  || $(BIN)/pip install -q -e '.[mutation]'
	$(PY) bench/mutation.py

clean:
	rm -rf build book/_build book/pages results mutants
