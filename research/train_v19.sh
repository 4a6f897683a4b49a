#!/usr/bin/env bash
# Rule v19's runs (research/PROTOCOL.md 100): English grammars on `news` with rule v18's v2k-c10
# recipe, seeds 1 and 2 side by side at one thread each, then seed 3.  Resumable: rerun the
# script and every run continues where it stopped (a finished run resumes to its last epoch and
# stops at once).
#
#   bash research/train_v19.sh          # DIR=runs
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${DIR:-runs}
SEEDS=${SEEDS:-"1 2 3"}
EXTRA="--threads 1"
EPOCHS=12
RECIPE=v2k-c10

source examples/background_runs.sh
source research/grammar_recipes.sh

seeds=($SEEDS)
for ((i = 0; i < ${#seeds[@]}; i += 2)); do
    pids=()
    for seed in "${seeds[@]:i:2}"; do
        # shellcheck disable=SC2046  (the recipe's options are words)
        start_run "$DIR/grammar-v19-news-$RECIPE-s$seed" --family grammar --corpus news --preset small \
            --seed "$seed" --keep-epochs --checkpoint-every 5m $(recipe_options "$RECIPE")
    done
    wait_runs "$DIR/grammar-v19-*/train.log"
done
