# The Python every target runs: an active virtual environment's, else ./.venv's when it exists,
# else python3 (a stock Debian/Ubuntu has no `python`); PYTHON=... on the command line overrides.
PYTHON ?= $(if $(VIRTUAL_ENV),$(VIRTUAL_ENV)/bin/python,$(if $(wildcard .venv/bin/python),.venv/bin/python,python3))
# The command line through that Python (works before the `onparse` script is on PATH).
ONPARSE = $(PYTHON) -m onparse
NLTK_PACKAGES = treebank conll2000 abc brown alpino cess_esp floresta

.PHONY: install installed data test research-test quickstart bench figures model results campaign multilingual languages students progress clean

install:  ## editable install with the test extras
	$(PYTHON) -m pip install -e '.[dev]'

data:  ## NLTK data packages, each skipped when NLTK already finds it
	$(PYTHON) -m onparse.text.data $(NLTK_PACKAGES)

TEST_WORKERS ?= 2

test:  ## the product's test suite (what CI runs): tests/ and the docstring examples of src/onparse, in TEST_WORKERS processes
	$(PYTHON) -m pytest -q -n $(TEST_WORKERS)

research-test:  ## the lab's tests: research/tests (every script of research/ against its recorded outputs; about a minute)
	$(PYTHON) -m pytest -q research/tests

installed:  ## install, unless `onparse` already runs this checkout (then nothing to do)
	@if $(PYTHON) -c 'import os, sys, importlib.metadata, onparse; importlib.metadata.distribution("onparse"); sys.exit(os.path.dirname(os.path.abspath(onparse.__file__)) != os.path.abspath("src/onparse"))' 2>/dev/null; then \
		echo "onparse is installed from this checkout: install skipped (make install forces it)"; \
	else $(MAKE) install; fi

quickstart: installed data  ## end to end on the embedded data: the bundled model beside right-branching on the test half, and a sentence parsed
	$(ONPARSE) eval --gold wsj10-sample-test --beside right
	@echo "Above: the bundled model (a student parser; onparse info says what it is) beside right-branching trees, on the test half of NLTK's WSJ sample (sentences of at most 10 words), which chose nothing."
	echo "the cat sat on the mat" | $(ONPARSE) induce -

bench:  ## side-by-side speed comparisons (prints ratios)
	$(PYTHON) benchmarks/bench_eval.py
	$(PYTHON) benchmarks/bench_train.py --config small
	$(PYTHON) benchmarks/bench_train.py --config paper --rounds 3 --batches 1
	$(PYTHON) benchmarks/bench_induce.py
	$(PYTHON) benchmarks/bench_grammar.py

model:  ## the bundled model: 5 seeds of the small preset on conll2000, 8 epochs, two side by side (about 1 hour on 2 CPU cores; resumable), every epoch scored on dev, then research/PROTOCOL.md rule v6
	RUNS="conll2000:1 conll2000:2" EPOCHS=8 bash research/train_campaign.sh
	RUNS="conll2000:3 conll2000:4" EPOCHS=8 bash research/train_campaign.sh
	RUNS="conll2000:5" EPOCHS=8 bash research/train_campaign.sh
	$(PYTHON) research/score_epochs.py runs/small-conll2000-s1 runs/small-conll2000-s2 runs/small-conll2000-s3 runs/small-conll2000-s4 runs/small-conll2000-s5
	$(PYTHON) research/choose_v6.py --bundle src/onparse/models/default.pt

results:  ## the rules' results tables in research/RESULTS.md, from the bundled model's test-half scores (rule v17, scored once)
	$(PYTHON) research/choose_v17.py --readme

campaign:  ## the recipe search of issue 32 (small preset, in-domain text; resumable), then every kept epoch scored on dev
	bash research/train_campaign.sh
	$(PYTHON) research/score_epochs.py runs/small-*

students:  ## rule v8: two students of the bundled model (onparse distill) on news' training text, side by side (about 1 hour on 2 CPU cores; resumable), then every epoch scored on dev beside the teacher and the choice made; the test half is scored once by hand (research/choose_v8.py --test)
	bash research/train_students.sh
	$(PYTHON) research/choose_v8.py

multilingual:  ## rule v7: 3 seeds of the small preset per treebank (Dutch, Spanish, Portuguese; about an hour on 2 CPU cores, resumable), every epoch scored on the dev part, members chosen on dev, test parts scored once (the README's table is rule v15's: make languages)
	for pair in "alpino:1 cess_esp:1" "floresta:1 alpino:2" "cess_esp:2 floresta:2" "alpino:3 cess_esp:3" "floresta:3"; do \
		RUNS="$$pair" EPOCHS=10 bash research/train_campaign.sh || exit 1; done
	for lang in alpino cess_esp floresta; do \
		$(PYTHON) research/score_epochs.py --gold $$lang-dev --records research/languages-dev.jsonl runs/small-$$lang-s1 runs/small-$$lang-s2 runs/small-$$lang-s3 || exit 1; done
	$(PYTHON) research/choose_v7.py
	test -f research/test-v7.json || $(PYTHON) research/choose_v7.py --test

languages:  ## rules v13, v15 and v18: grammars per treebank beside rule v7's language models (retrained), students of the dev choices (about 3 hours on 2 CPU cores, resumable), every epoch scored on the dev part, chosen on dev, test parts scored once, README table
	bash research/train_v13.sh
	for lang in alpino cess_esp floresta; do for seed in 1 2 3; do \
		$(PYTHON) research/score_epochs.py --decoders mbr --gold $$lang-dev --records research/grammar-languages-dev.jsonl runs/grammar-fit-$$lang-s$$seed || exit 1; done; done
	$(PYTHON) research/choose_v13.py
	test -f research/test-v13.json || $(PYTHON) research/choose_v13.py --test
	bash research/students_v15.sh
	$(PYTHON) research/students_v15.py
	test -f research/test-v15.json || $(PYTHON) research/students_v15.py --test
	bash research/train_v18.sh
	for lang in alpino cess_esp; do for run in runs/grammar-v18-$$lang-*; do \
		$(PYTHON) research/score_epochs.py --decoders mbr --gold $$lang-dev --records research/grammar-v18-dev.jsonl $$run || exit 1; done; done
	$(PYTHON) research/choose_v18.py
	RULE=v18 LANGS="alpino cess_esp" bash research/students_v15.sh
	$(PYTHON) research/students_v18.py
	test -f research/test-v18.json || $(PYTHON) research/choose_v18.py --test
	$(PYTHON) research/choose_v18.py --readme

progress:  ## time to quality: every epoch of the recipe's runs, scored (for reading only)
	$(PYTHON) research/progress.py runs/news-s1 runs/news-s2 runs/news-s3
	$(PYTHON) research/progress.py runs/news-s3 runs/news-s4 runs/news-s5 --out research/progress-v2.md --figure research/figures/time-to-quality-v2.png

figures:  ## README pictures into examples/figures/ from the bundled model (a minute; examples/make_figures.py --tiny trains a tiny LM instead)
	$(PYTHON) examples/make_figures.py

clean:
	rm -rf build dist *.egg-info src/*.egg-info .pytest_cache .ci-venv
