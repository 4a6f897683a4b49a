#!/usr/bin/env bash
# Train the `tiny` preset on a small generated corpus, stop it half way, resume it, measure
# perplexity, and distill a student parser from it: the whole training workflow in about a minute
# on a laptop CPU.
#
#   bash examples/train_tiny.sh [WORKDIR]
#
# For a real model, the same commands with `--preset small` (CPU, minutes per epoch on the
# embedded WSJ text) or `--preset paper` (a GPU; `torchrun --nproc_per_node N -m onparse train`
# for several).
set -euo pipefail

work="${1:-$(mktemp -d)}"
mkdir -p "$work"
corpus="$work/toy.txt"

# A toy language: noun phrases with optional adjectives and prepositional phrases.
python - "$corpus" <<'PY'
import random, sys
rng = random.Random(0)
nouns, verbs = "cat dog bird man woman child".split(), "saw liked chased found".split()
adjs, dets, preps = "big small red old".split(), "the a every some".split(), "with near under".split()
def np_(depth=0):
    words = [rng.choice(dets)] + ([rng.choice(adjs)] if rng.random() < 0.4 else []) + [rng.choice(nouns)]
    if depth < 2 and rng.random() < 0.25:
        words += [rng.choice(preps)] + np_(depth + 1)
    return words
with open(sys.argv[1], "w") as out:
    for _ in range(400):
        out.write(" ".join(np_() + [rng.choice(verbs)] + np_()) + " .\n")
PY

# 1. Train for a few steps, then stop (as --max-time or Ctrl-C would).
onparse train --preset tiny --corpus "$corpus" --out "$work/run" --threads 1 --max-steps 40
# 2. Continue exactly where it stopped, to the end of epoch 4.
onparse train --out "$work/run" --resume --epochs 4 --threads 1
# 3. Perplexity of the best checkpoint on the held-out test sentences, then on the whole file.
onparse perplexity --model "$work/run/best.pt" --corpus "$corpus" --split test
onparse perplexity --model "$work/run/best.pt" --corpus "$corpus"
# 4. The metrics log, one JSON object per line.
tail -n 3 "$work/run/metrics.jsonl"
echo "files in $work/run:" && ls "$work/run"
# 5. A student parser taught by the model's trees of the same text (onparse distill), then one
#    sentence's tree from the student alone and averaged with its teacher.
onparse distill "$corpus" -m "$work/run/best.pt" --out "$work/student.pt" --epochs 2 --hidden-size 50 \
    --mlp-size 50 --threads 1 -q
onparse info -m "$work/student.pt" | grep -E "^(teacher|text|agreement)"
echo "the big dog saw a cat near the old man ." | onparse induce - -m "$work/student.pt"
echo "the big dog saw a cat near the old man ." | onparse induce - -m "$work/run/best.pt" -m "$work/student.pt"
