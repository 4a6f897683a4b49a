PYTHON ?= python
NLTK_PACKAGES = treebank conll2000 brown

.PHONY: install data test quickstart bench figures clean

install:  ## editable install with the test extras
	$(PYTHON) -m pip install -e '.[dev]'

data:  ## NLTK data packages, each skipped when NLTK already finds it
	$(PYTHON) -m onparse.data $(NLTK_PACKAGES)

test:  ## the whole test suite (what CI runs)
	$(PYTHON) -m pytest -q

quickstart: install data  ## end to end on the embedded data: right-branching baseline, then scored
	onparse baseline --gold wsj10 --kind right > right.wsj10.txt
	onparse eval --gold wsj10 right.wsj10.txt

bench:  ## side-by-side speed comparisons (prints ratios)
	$(PYTHON) benchmarks/bench_eval.py

figures:  ## README pictures into examples/figures/ (trains a tiny LM, under a minute)
	$(PYTHON) examples/make_figures.py

clean:
	rm -rf build dist *.egg-info src/*.egg-info .pytest_cache right.wsj10.txt
