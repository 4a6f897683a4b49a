#!/usr/bin/env bash
# The recipe search of issue 32 (research/README.md, "Campaign"): in-domain text with the `small`
# preset, many epochs, every epoch kept so that research/score_epochs.py can score them on the
# dev half.  Resumable: rerun the script and every run continues exactly where it stopped.
#
#   RUNS="conll2000:1 conll2000+press:1" MAX_TIME=2h10m bash research/train_campaign.sh
#
# Each entry CORPUS:SEED trains `onparse train --preset small --corpus CORPUS --seed SEED` into
# $DIR/small-CORPUS-sSEED, one thread each (two runs side by side on two cores train 1.4x faster
# than one run on both).
set -euo pipefail
cd "$(dirname "$0")/.."

EPOCHS=${EPOCHS:-60}
RUNS=${RUNS:-"conll2000:1 conll2000+press:1"}
DIR=${DIR:-runs}
EXTRA="--threads 1 ${MAX_TIME:+--max-time $MAX_TIME}"

source examples/background_runs.sh
for run in $RUNS; do
    corpus=${run%%:*}
    seed=${run##*:}
    start_run "$DIR/small-$corpus-s$seed" --preset small --corpus "$corpus" --seed "$seed" --keep-epochs
done
wait_runs "$DIR/small-*/train.log"
