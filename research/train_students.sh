#!/usr/bin/env bash
# The students of rule v8 (research/PROTOCOL.md, rules 41-46): `onparse distill` of the bundled
# model's trees of `news`' training text, seeds side by side at one thread each, every epoch kept.
# Resumable: rerun the script and every run continues exactly where it stopped.
#
#   SEEDS="1 2" bash research/train_students.sh
set -euo pipefail
cd "$(dirname "$0")/.."

SEEDS=${SEEDS:-"1 2"}
TEXT=runs/distill/news-train.txt
mkdir -p runs/distill
[ -f "$TEXT" ] || python research/distill_text.py "$TEXT"
pids=()
for seed in $SEEDS; do
    run=runs/distill/run-s$seed
    resume=()
    [ -f "$run/last.pt" ] && resume=(--resume --force)
    onparse distill "$TEXT" --pretokenized --out "runs/distill/student-s$seed.pt" --run-dir "$run" \
        --seed "$seed" --epochs 6 --keep-epochs --threads 1 "${resume[@]}" >>"runs/distill/run-s$seed.log" 2>&1 &
    pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
[ "$status" -eq 0 ] || { echo "a student run failed (see runs/distill/run-s*.log)" >&2; exit "$status"; }
