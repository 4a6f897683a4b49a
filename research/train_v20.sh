#!/usr/bin/env bash
# Rule v20's runs (research/PROTOCOL.md 107): English grammars of rule v9's recipe (the `small`
# preset, 10,000 words), seeds 4 and 5 side by side at one thread each, then 6 and 7.  Resumable:
# rerun the script and every run continues where it stopped.
#
#   bash research/train_v20.sh          # DIR=runs; about 55 minutes a run on one thread
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${DIR:-runs}
SEEDS=${SEEDS:-"4 5 6 7"}
EXTRA="--threads 1"
EPOCHS=6

source examples/background_runs.sh

seeds=($SEEDS)
for ((i = 0; i < ${#seeds[@]}; i += 2)); do
    pids=()
    for seed in "${seeds[@]:i:2}"; do
        start_run "$DIR/grammar-v20-news-s$seed" --family grammar --corpus news --preset small \
            --seed "$seed" --keep-epochs --checkpoint-every 5m
    done
    wait_runs "$DIR/grammar-v20-*/train.log"
done
