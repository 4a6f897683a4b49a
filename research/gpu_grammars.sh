#!/usr/bin/env bash
# Rule v9 (PROTOCOL.md 48): grammar variants trained side by side on one lent GPU, every kept
# epoch scored on wsj-sample-dev as it is written, within one device call of at most 10 minutes.
#
#   OUT=/some/folder TRAIN_SECONDS=390 bash research/gpu_grammars.sh
#   OUT=... CORPUS=alpino GOLD=alpino-dev bash research/gpu_grammars.sh    # another language
#
# Needs NLTK_DATA with abc, brown, conll2000 (the news corpus) and treebank (the dev gold), and
# onparse importable (PYTHONPATH=src).  Writes under OUT: grammar-dev-gpu.jsonl (score_epochs.py's
# records), logs.tar.gz (each run's log and metrics.jsonl, the scorer's and the CUDA tests' logs)
# and models.tar.part-* (the best-scoring epoch of each run, split in 15 MB pieces: the device
# tool returns files of at most 16 MiB).  Why bigger batches than the recipe's 8: on a GPU a
# batch of 8 costs about what it costs on one CPU thread (each step launches thousands of small
# kernels), so only wider batches buy anything there.
set -u
OUT=${OUT:?set OUT}
TRAIN_SECONDS=${TRAIN_SECONDS:-360}
DEVICE=${DEVICE:-cuda}
START=$(date +%s)
mkdir -p runs "$OUT"
PY=${PYTHON:-python3}
# name: preset batch lr seed
RUNS=${RUNS:-"small 32 2e-3 1
small 32 2e-3 2
small 64 2e-3 1
large 32 2e-3 1
large 32 2e-3 2"}

( timeout 240 $PY -m pytest -q -p no:cacheprovider tests/test_cuda.py > runs/cuda-tests.log 2>&1;
  echo "exit $?" >> runs/cuda-tests.log ) &

names=()
while read -r preset batch lr seed; do
    [ -z "$preset" ] && continue
    name="grammar-${CORPUS:+$(basename "$CORPUS" .txt)-}$preset-b$batch-lr$lr-s$seed-gpu"
    names+=("runs/$name")
    $PY -m onparse train --family grammar --preset "$preset" --corpus "${CORPUS:-news}" --batch-size "$batch" --lr "$lr" \
        --seed "$seed" --epochs 12 --keep-epochs --device "$DEVICE" --max-time "$TRAIN_SECONDS" \
        --checkpoint-every 0 --no-progress --out "runs/$name" > "runs/$name.log" 2>&1 &
    pids+=($!)
done <<< "$RUNS"

$PY research/score_epochs.py --decoders mbr --device "$DEVICE" --gold "${GOLD:-wsj-sample-dev}" --records "$OUT/grammar-dev-gpu.jsonl" \
    --until runs/TRAINED "${names[@]}" > runs/scorer.log 2>&1 &
scorer=$!

# Trainers stop themselves after TRAIN_SECONDS of training; a hard stop keeps the call in time.
deadline=$((START + TRAIN_SECONDS + 120))
for pid in "${pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 5; done
    kill -INT "$pid" 2>/dev/null
done
wait "${pids[@]}" 2>/dev/null
touch runs/TRAINED
score_deadline=$((START + TRAIN_SECONDS + 170))
while kill -0 "$scorer" 2>/dev/null && [ "$(date +%s)" -lt "$score_deadline" ]; do sleep 3; done
kill "$scorer" 2>/dev/null
nvidia-smi > runs/nvidia-smi.txt 2>&1

# The best-scoring epoch of each run (rule 49's ranking, choose_v9.py), best runs first, within 55 MB.
$PY - "$OUT/grammar-dev-gpu.jsonl" > runs/chosen-files.txt <<'EOF'
import json, os, sys
sys.path.insert(0, "research")
from choose_v9 import SNAPSHOT, best_of_runs, ranked_members
path = sys.argv[1]
records = [json.loads(l) for l in open(path)] if os.path.exists(path) else []
ranked = ranked_members(records)
total = 0
for run, epoch in best_of_runs(ranked, len({run for run, _ in ranked})) or []:
    f = os.path.relpath(SNAPSHOT.format(run=run, epoch=epoch))
    size = os.path.getsize(f)
    if total + size <= 55e6:
        total += size
        print(f)
EOF
tar czf "$OUT/logs.tar.gz" runs/*.log runs/*/metrics.jsonl runs/nvidia-smi.txt runs/chosen-files.txt 2>/dev/null
if [ -s runs/chosen-files.txt ]; then
    tar cf - $(cat runs/chosen-files.txt) | split -b 15000000 - "$OUT/models.tar.part-"
fi
echo "done in $(( $(date +%s) - START )) s"; ls -la "$OUT"; tail -3 runs/cuda-tests.log; cat runs/scorer.log | tail -20
