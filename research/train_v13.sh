#!/usr/bin/env bash
# Rule v13's runs (research/PROTOCOL.md 71-72): three grammars per treebank on rule 56's texts
# (the command `onparse fit --grammars` runs), and the language models of rule v7 that its
# choices use, up to the last epoch used (rule 36's command); two side by side at one thread
# each.  Resumable: rerun the script and every run continues where it stopped.
#
#   bash research/train_v13.sh            # DIR=runs, about 1.5 hours on 2 CPU cores
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${DIR:-runs}
PYTHON=${PYTHON:-python}
EXTRA="--threads 1"
mkdir -p "$DIR"
TEXTS=$(cd "$DIR" && pwd)      # fit records its text by absolute path: the grammars are trained on the same

source examples/background_runs.sh
[ -f "$DIR/fit-text-floresta.txt" ] || $PYTHON research/fit_texts.py --out-dir "$DIR" alpino cess_esp floresta

grammar() {   # NAME SEED
    EPOCHS=12 start_run "$DIR/grammar-fit-$1-s$2" --family grammar --corpus "$TEXTS/fit-text-$1.txt" \
        --preset small --seed "$2" --keep-epochs --checkpoint-every 5m
}
lm() {        # NAME SEED EPOCHS
    EPOCHS=$3 start_run "$DIR/small-$1-s$2" --preset small --corpus "$1" --seed "$2" --keep-epochs
}

for pair in "grammar cess_esp 1;grammar floresta 1" "grammar alpino 1;grammar cess_esp 2" \
            "grammar floresta 2;grammar alpino 2" "grammar cess_esp 3;grammar floresta 3" \
            "grammar alpino 3;lm alpino 3 10" "lm cess_esp 2 10;lm cess_esp 3 10" \
            "lm alpino 1 7;lm cess_esp 1 6" "lm floresta 1 6;lm floresta 3 1"; do
    IFS=';' read -r first second <<< "$pair"
    pids=()
    $first
    $second
    wait_runs "$DIR/*/train.log"
done
