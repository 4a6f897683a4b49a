#!/usr/bin/env bash
# English grammars on `news`, two side by side at one thread each, in seed order.  Resumable:
# rerun the script and every run continues where it stopped (a finished run resumes to its last
# epoch and stops at once).
#
#   bash research/train_v19.sh    # rule v19 (PROTOCOL.md 100): rule v18's v2k-c10 recipe, seeds 1-3, 12 epochs
#   bash research/train_v20.sh    # rule v20 (PROTOCOL.md 107): rule v9's recipe, seeds 4-7, 6 epochs
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${DIR:-runs}
RULE=${RULE:-v19}
EXTRA="--threads 1"

source examples/background_runs.sh
source research/grammar_recipes.sh

case $RULE in
    v19) SEEDS=${SEEDS:-"1 2 3"}; EPOCHS=12; NAME=grammar-v19-news-v2k-c10; OPTIONS=$(recipe_options v2k-c10) ;;
    v20) SEEDS=${SEEDS:-"4 5 6 7"}; EPOCHS=6; NAME=grammar-v20-news; OPTIONS="" ;;
    *) echo "unknown rule $RULE" >&2; exit 2 ;;
esac

seeds=($SEEDS)
for ((i = 0; i < ${#seeds[@]}; i += 2)); do
    pids=()
    for seed in "${seeds[@]:i:2}"; do
        # shellcheck disable=SC2086  (the recipe's options are words)
        start_run "$DIR/$NAME-s$seed" --family grammar --corpus news --preset small \
            --seed "$seed" --keep-epochs --checkpoint-every 5m $OPTIONS
    done
    wait_runs "$DIR/$NAME-*/train.log"
done
