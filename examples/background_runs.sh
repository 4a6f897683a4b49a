# Sourced by examples/train_languages.sh (and once by the lab's research/train_default.sh, kept at the git tag lab-scripts-v22):
# several `onparse train` runs side by side in the background, each resumed where it stopped.
#
#   start_run OUT ARGS...   resume the run in OUT when it holds last.pt (the settings are in
#                           last.pt), else start one with ARGS; --epochs "$EPOCHS" and $EXTRA are
#                           added either way; output appended to OUT/train.log
#   wait_runs WHAT          wait for every run started; when one failed, say so and exit with its status

pids=()

start_run() {
    local out=$1
    shift
    mkdir -p "$out"
    if [ -f "$out/last.pt" ]; then
        onparse train --out "$out" --resume --epochs "$EPOCHS" $EXTRA >>"$out/train.log" 2>&1 &
    else
        onparse train "$@" --epochs "$EPOCHS" --out "$out" $EXTRA >>"$out/train.log" 2>&1 &
    fi
    pids+=($!)
}

wait_runs() {
    local status=0 pid
    for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
    [ "$status" -eq 0 ] || { echo "a run failed (see $1)" >&2; exit "$status"; }
}
