#!/usr/bin/env bash
# The recipe of the model bundled with onparse (`make model`): the `small` preset (the paper's
# dropout rates at a CPU-sized width) on the embedded WSJ text, 15 epochs, five seeds, the
# checkpoint of each run chosen by validation perplexity; the seed with the best validation
# perplexity is exported (fp16 weights, metadata with its scores) into the package as
# src/onparse/models/default.pt.  Then `make results` regenerates the tables.
#
#   bash examples/train_default.sh            # all five seeds, one after another
#   SEEDS="2" bash examples/train_default.sh  # one seed (e.g. one per machine), then rerun to bundle
#
# On two CPU cores one seed alone takes about 80 s an epoch (20 minutes for 15 epochs); seeds run
# side by side with EXTRA="--threads 1" take about 120 s an epoch each with two at once and 190 s with
# three.  On a GPU add `--device cuda` through EXTRA.  An interrupted seed continues with --resume.
set -euo pipefail
cd "$(dirname "$0")/.."

EPOCHS=${EPOCHS:-15}
SEEDS=${SEEDS:-"1 2 3 4 5"}
RUNS=${RUNS:-runs}
EXTRA=${EXTRA:-}

for seed in $SEEDS; do
    out="$RUNS/default-s$seed"
    if [ -f "$out/last.pt" ]; then
        onparse train --out "$out" --resume --epochs "$EPOCHS" $EXTRA
    else
        onparse train --preset small --corpus wsj --epochs "$EPOCHS" --seed "$seed" --out "$out" $EXTRA
    fi
done

python examples/bundle_default.py --epochs "$EPOCHS" "$RUNS"/default-s*/best.pt
