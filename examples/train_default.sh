#!/usr/bin/env bash
# The recipe of the model bundled with onparse (`make model`): the `paper` preset (the paper's
# dropout rates, optimiser and schedule) at a width that fits the 20 MB package limit in fp16
# (embeddings 300, 3 ON-LSTM layers of 600 units, 9.4M parameters) on the embedded WSJ text,
# 15 epochs, three seeds, the checkpoint of each run chosen by validation perplexity; the seed
# with the best validation perplexity is exported (fp16 weights, metadata with its scores) into
# the package as src/onparse/models/default.pt.  Then `make results` regenerates the tables.
#
#   bash examples/train_default.sh            # all three seeds, one after another
#   SEEDS="2" bash examples/train_default.sh  # one seed (e.g. one per machine), then rerun to bundle
#
# On two CPU cores three seeds side by side with EXTRA="--threads 1" took about 345 s an epoch
# each (the three together: 90 minutes for 15 epochs).  On a GPU add `--device cuda` through
# EXTRA.  An interrupted seed continues with --resume, exactly where it stopped.
set -euo pipefail
cd "$(dirname "$0")/.."

EPOCHS=${EPOCHS:-15}
SEEDS=${SEEDS:-"1 2 3"}
RUNS=${RUNS:-runs}
EXTRA=${EXTRA:-}

for seed in $SEEDS; do
    out="$RUNS/default-s$seed"
    if [ -f "$out/last.pt" ]; then
        onparse train --out "$out" --resume --epochs "$EPOCHS" $EXTRA
    else
        onparse train --preset paper --embedding-size 300 --hidden-size 600 --corpus wsj --epochs "$EPOCHS" --seed "$seed" --out "$out" $EXTRA
    fi
done

python examples/bundle_default.py --epochs "$EPOCHS" "$RUNS"/default-s*/best.pt
