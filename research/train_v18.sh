#!/usr/bin/env bash
# Rule v18's runs (research/PROTOCOL.md 94): grammar recipes for small texts, two side by side at
# one thread each, in the rule's order.  Resumable: rerun the script and every run continues
# where it stopped (a finished run resumes to its last epoch and stops at once).
#
#   bash research/train_v18.sh                 # DIR=runs; about 15 minutes a run on one thread
#   LANGS="floresta" bash research/train_v18.sh    # rule 94's runs for fit's evidence
#   SEEDS=3 RECIPES=v2k-c10 bash research/train_v18.sh   # more seeds of one recipe (the same command)
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${DIR:-runs}
PYTHON=${PYTHON:-python}
LANGS=${LANGS:-"alpino cess_esp"}
SEEDS=${SEEDS:-"1 2"}
RECIPES=${RECIPES:-"v2k v2k-c10"}
EXTRA="--threads 1"
EPOCHS=12
mkdir -p "$DIR"
TEXTS=$(cd "$DIR" && pwd)      # the grammars record their text by absolute path, as rule v13's

source examples/background_runs.sh
source research/grammar_recipes.sh
for lang in $LANGS; do
    [ -f "$DIR/fit-text-$lang.txt" ] || $PYTHON research/fit_texts.py --out-dir "$DIR" "$lang"
done

runs=()
for seed in $SEEDS; do
    for recipe in $RECIPES; do
        for lang in $LANGS; do runs+=("$lang $recipe $seed"); done
    done
done
for ((i = 0; i < ${#runs[@]}; i += 2)); do
    pids=()
    for run in "${runs[@]:i:2}"; do
        read -r lang recipe seed <<< "$run"
        # shellcheck disable=SC2046  (the recipe's options are words)
        start_run "$DIR/grammar-v18-$lang-$recipe-s$seed" --family grammar --corpus "$TEXTS/fit-text-$lang.txt" \
            --preset small --seed "$seed" --keep-epochs --checkpoint-every 5m $(recipe_options "$recipe")
    done
    wait_runs "$DIR/grammar-v18-*/train.log"
done
