#!/usr/bin/env bash
# Rule v15 (research/PROTOCOL.md, 82-83): teacher trees, then the seed-1 student, for Dutch,
# Spanish and Portuguese one after another, at nice 19 beside other work; each step's start and
# end go to runs/students-v15.log.  A language whose student exists is skipped; a stopped
# student is resumed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
LANGS=${LANGS:-alpino cess_esp floresta}
LOG=${LOG:-runs/students-v15.log}
mkdir -p runs/distill
for lang in $LANGS; do
  if [ -e "runs/distill/v15-$lang-s1.pt" ]; then
    echo "$(date -u +%FT%TZ) $lang: student exists, skipped" >> "$LOG"
    continue
  fi
  if [ ! -s "runs/distill/v15-teacher-$lang.txt" ]; then
    echo "$(date -u +%FT%TZ) $lang: teacher trees start" >> "$LOG"
    nice -n 19 "$PYTHON" research/students_v15.py teacher "$lang" 2>> "$LOG"
  fi
  echo "$(date -u +%FT%TZ) $lang: student start" >> "$LOG"
  resume=()
  [ -d "runs/distill/v15-$lang-s1.run" ] && resume=(--resume)
  nice -n 19 "$PYTHON" research/students_v15.py train "$lang" "${resume[@]}" 2>> "$LOG"
  echo "$(date -u +%FT%TZ) $lang: student end" >> "$LOG"
done
