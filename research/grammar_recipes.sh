# Rule v18's grammar recipes for small texts (research/PROTOCOL.md 94), shared by train_v18.sh and
# train_v19.sh (sourced, not run):
#
#   recipe_options RECIPE   the options `onparse train --family grammar` adds for RECIPE

recipe_options() {   # RECIPE
    case $1 in
        v2k) echo "--max-vocab 2000" ;;
        v2k-c10) echo "--max-vocab 2000 --curriculum-start 10" ;;
        *) echo "unknown recipe $1" >&2; exit 2 ;;
    esac
}
