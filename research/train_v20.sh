#!/usr/bin/env bash
# Rule v20's runs (research/PROTOCOL.md 107): English grammars of rule v9's recipe (the `small`
# preset, 10,000 words), seeds 4 and 5 side by side at one thread each, then 6 and 7, six epochs
# (about 55 minutes a run).  Resumable.  The work is train_v19.sh's.
RULE=v20 exec bash "$(dirname "$0")/train_v19.sh" "$@"
