#!/usr/bin/env bash
# The multilingual table of the README (`make multilingual`): one language model per NLTK
# treebank in another language, trained only on that treebank's training part (85% of its
# sentences; the held-out 10% are the gold sets NAME-test and NAME10-test), then scored on the
# held-out part against right- and left-branching (examples/multilingual.py).
#
# The small preset (3 ON-LSTM layers of 400/400/200, the paper's dropout rates), 10 epochs,
# seed 1; the checkpoint of lowest validation perplexity.  On two CPU cores, the three side by
# side with one thread each: a few minutes an epoch.  Rerun to resume.
set -euo pipefail
cd "$(dirname "$0")/.."

EPOCHS=${EPOCHS:-10}
RUNS=${RUNS:-runs}
EXTRA=${EXTRA:---threads 1}
LANGS=${LANGS:-"alpino cess_esp floresta"}

pids=()
for lang in $LANGS; do
    out="$RUNS/lang-$lang"
    mkdir -p "$out"
    if [ -f "$out/last.pt" ]; then
        onparse train --out "$out" --resume --epochs "$EPOCHS" $EXTRA >>"$out/train.log" 2>&1 &
    else
        onparse train --preset small --corpus "$lang" --epochs "$EPOCHS" --seed 1 --out "$out" $EXTRA \
            >>"$out/train.log" 2>&1 &
    fi
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
python examples/multilingual.py $(for lang in $LANGS; do echo "$RUNS/lang-$lang/best.pt"; done)
