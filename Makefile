# The Python every target runs: an active virtual environment's, else ./.venv's when it exists,
# else python3 (a stock Debian/Ubuntu has no `python`); PYTHON=... on the command line overrides.
PYTHON ?= $(if $(VIRTUAL_ENV),$(VIRTUAL_ENV)/bin/python,$(if $(wildcard .venv/bin/python),.venv/bin/python,python3))
# The command line through that Python (works before the `onparse` script is on PATH).
ONPARSE = $(PYTHON) -m onparse
NLTK_PACKAGES = treebank conll2000 abc brown alpino cess_esp floresta

.PHONY: install installed data test research-test quickstart bench figures model lab clean

install:  ## editable install with the test extras
	$(PYTHON) -m pip install -e '.[dev]'

data:  ## NLTK data packages, each skipped when NLTK already finds it
	$(PYTHON) -m onparse.text.data $(NLTK_PACKAGES)

TEST_WORKERS ?= 2

test:  ## the product's test suite (what CI runs): tests/ and the docstring examples of src/onparse, in TEST_WORKERS processes
	$(PYTHON) -m pytest -q -n $(TEST_WORKERS)

research-test:  ## the lab's tests: research/tests (every rule replayed from its records, the runner's verbs on tiny runs; about a minute)
	$(PYTHON) -m pytest -q research/tests

installed:  ## install, unless `onparse` already runs this checkout (then nothing to do)
	@if $(PYTHON) -c 'import os, sys, importlib.metadata, onparse; importlib.metadata.distribution("onparse"); sys.exit(os.path.dirname(os.path.abspath(onparse.__file__)) != os.path.abspath("src/onparse"))' 2>/dev/null; then \
		echo "onparse is installed from this checkout: install skipped (make install forces it)"; \
	else $(MAKE) install; fi

quickstart: installed data  ## end to end on the embedded data: the bundled model beside right-branching on the test half, and one of its sentences drawn beside its gold tree
	$(ONPARSE) eval --gold wsj10-sample-test --baseline right
	@echo "Above: the bundled model (a student parser; onparse info says what it is) beside right-branching trees, on the test half of NLTK's WSJ sample (sentences of at most 10 words), which chose nothing."
	$(ONPARSE) show --gold wsj10-sample-test:3
	@echo "Above: the test half's sentence 3, the tree the bundled model induces for it beside the treebank's own, and its sentence F1 (onparse show --gold wsj10-sample-test:N draws any other)."

bench:  ## side-by-side speed comparisons (prints ratios)
	$(PYTHON) benchmarks/bench_eval.py
	$(PYTHON) benchmarks/bench_train.py --config small
	$(PYTHON) benchmarks/bench_train.py --config paper --rounds 3 --batches 1
	$(PYTHON) benchmarks/bench_induce.py
	$(PYTHON) benchmarks/bench_grammar.py

model:  ## the shipped model rebuilt from its recorded parts into runs/model/ and checked byte for byte against it (it never overwrites the shipped file), and how its parts come back
	$(PYTHON) research/lab.py model
	$(PYTHON) research/lab.py shipped

lab:  ## the lab's rules and where each stands; every rule's recorded dev scores replayed to its recorded choice
	$(PYTHON) research/lab.py list
	$(PYTHON) research/lab.py replay

figures:  ## README pictures into examples/figures/ from the bundled model (a minute; examples/make_figures.py --tiny trains a tiny LM instead)
	$(PYTHON) examples/make_figures.py

clean:
	rm -rf build dist *.egg-info src/*.egg-info .pytest_cache .ci-venv
