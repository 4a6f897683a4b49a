#!/usr/bin/env bash
# Rule v15 (research/PROTOCOL.md, 82-83): teacher trees, then the seed-1 student, for Dutch,
# Spanish and Portuguese one after another, at nice 19 beside other work; each step's start and
# end go to runs/students-v15.log.  A language whose student exists is skipped; a stopped
# student is resumed.  RULE=v18 does the same for rule 97 (research/students_v18.py; its
# languages are Dutch and Spanish).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
RULE=${RULE:-v15}
LANGS=${LANGS:-alpino cess_esp floresta}
LOG=${LOG:-runs/students-$RULE.log}
mkdir -p runs/distill
for lang in $LANGS; do
  if [ -e "runs/distill/$RULE-$lang-s1.pt" ]; then
    echo "$(date -u +%FT%TZ) $lang: student exists, skipped" >> "$LOG"
    continue
  fi
  if [ ! -s "runs/distill/$RULE-teacher-$lang.txt" ]; then
    echo "$(date -u +%FT%TZ) $lang: teacher trees start" >> "$LOG"
    nice -n 19 "$PYTHON" research/students_$RULE.py teacher "$lang" 2>> "$LOG"
  fi
  echo "$(date -u +%FT%TZ) $lang: student start" >> "$LOG"
  resume=()
  [ -d "runs/distill/$RULE-$lang-s1.run" ] && resume=(--resume)
  nice -n 19 "$PYTHON" research/students_$RULE.py train "$lang" "${resume[@]}" 2>> "$LOG"
  echo "$(date -u +%FT%TZ) $lang: student end" >> "$LOG"
done
