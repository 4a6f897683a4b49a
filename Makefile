PYTHON ?= python
NLTK_PACKAGES = treebank conll2000 abc brown alpino cess_esp floresta

.PHONY: install installed data test quickstart bench figures model results multilingual progress clean

install:  ## editable install with the test extras
	$(PYTHON) -m pip install -e '.[dev]'

data:  ## NLTK data packages, each skipped when NLTK already finds it
	$(PYTHON) -m onparse.data $(NLTK_PACKAGES)

test:  ## the whole test suite (what CI runs)
	$(PYTHON) -m pytest -q

installed:  ## install, unless `onparse` already runs this checkout (then nothing to do)
	@if $(PYTHON) -c 'import os, sys, onparse; sys.exit(os.path.dirname(os.path.abspath(onparse.__file__)) != os.path.abspath("src/onparse"))' 2>/dev/null \
		&& command -v onparse >/dev/null; then \
		echo "onparse is installed from this checkout: install skipped (make install forces it)"; \
	else $(MAKE) install; fi

quickstart: installed data  ## end to end on the embedded data: a baseline and the bundled model, scored
	onparse baseline --gold wsj10 --kind right > right.wsj10.txt
	onparse eval --gold wsj10 right.wsj10.txt
	onparse eval --gold wsj10 --layer all --decode all
	echo "the cat sat on the mat" | onparse induce -

bench:  ## side-by-side speed comparisons (prints ratios)
	$(PYTHON) benchmarks/bench_eval.py
	$(PYTHON) benchmarks/bench_train.py --config small
	$(PYTHON) benchmarks/bench_train.py --config paper --rounds 3 --batches 1
	$(PYTHON) benchmarks/bench_induce.py

model:  ## the bundled model: seeds 3, 4 and 5 of the recipe side by side, 11 epochs (about 5 hours on 2 CPU cores; resumable), bundled by PROTOCOL.md's rules v2-v4
	bash examples/train_default.sh

results:  ## examples/results.md and the README table, from the bundled model (held-out scores); with runs/all-seeds.pt, the three-seed report too
	$(PYTHON) examples/results.py --default src/onparse/models/default.pt
	if [ -f runs/all-seeds.pt ]; then $(PYTHON) examples/results.py --default runs/all-seeds.pt \
	    --out examples/results-3seeds.md --json examples/results-3seeds.json --block seeds \
	    --label "the bundle of all 3 seeds (float32, not shipped)"; fi

multilingual:  ## train the Dutch, Spanish and Portuguese models (minutes each) and write their README table
	bash examples/train_languages.sh

progress:  ## time to quality: every epoch of the recipe's runs, scored (for reading only)
	$(PYTHON) examples/progress.py runs/news-s1 runs/news-s2 runs/news-s3
	$(PYTHON) examples/progress.py runs/news-s3 runs/news-s4 runs/news-s5 --out examples/progress-v2.md --figure examples/figures/time-to-quality-v2.png

figures:  ## README pictures into examples/figures/ from the bundled model (a minute; examples/make_figures.py --tiny trains a tiny LM instead)
	$(PYTHON) examples/make_figures.py

clean:
	rm -rf build dist *.egg-info src/*.egg-info .pytest_cache right.wsj10.txt
