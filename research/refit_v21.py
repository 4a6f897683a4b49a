"""Rule v21 (PROTOCOL.md 110-113): `onparse fit TEXT --seeds 2 --grammars 7 --max-time 3h20m`
over runs already trained with the commands that fit runs (the same 36-minute share as rule v14).

    python research/refit_v21.py floresta     # runs/fit-floresta-v21.fit -> runs/fit-floresta-v21.pt
    python research/refit_v21.py english      # trains grammar-4..7 itself (about 1 h 50 min)

Dutch, Spanish, Portuguese: lm-S links to rule v10's fit runs, grammar-1..3 to rule 71's runs,
grammar-4..7 to runs/grammar-x39-L-sS (the same command), each checked as rule 79 checks them
(the Dutch and Spanish seeds 4-7 without its time check, rule 114).
English: lm-1, lm-2 and grammar-1..3 link to rule v14's English fit runs with the seconds that
fit spent on them; the resumed fit trains grammar-4..7.  Then fit's choose and bundle stages run.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refit_v14  # noqa: E402

#: Rule 111's settings.
SETTINGS = ["--seeds", "2", "--grammars", "7", "--preset", "small", "--max-time", "3h20m", "--threads", "2"]
NEW_SEEDS = (4, 5, 6, 7)


def main(language):
    runs = refit_v14.RUNS
    if language == "english":
        earlier = os.path.join(runs, "fit-english-v14.fit")
        links = {run: os.path.join(earlier, run) for run in ("lm-1", "lm-2", "grammar-1", "grammar-2", "grammar-3")}
        return refit_v14.refit(language, "v21", SETTINGS, links, carried=tuple(links),
                               trained=tuple(f"grammar-{s}" for s in NEW_SEEDS))
    links = refit_v14.sources(language)
    new = {f"grammar-{s}": os.path.join(runs, f"grammar-x39-{language}-s{s}") for s in NEW_SEEDS}
    links.update(new)
    # Rule 114: the Dutch and Spanish seeds 4-7 trained beside four to six processes on two
    # cores, so their wall time is reported, not checked against the share.
    untimed = tuple(new) if language in ("alpino", "cess_esp") else ()
    return refit_v14.refit(language, "v21", SETTINGS, links, untimed=untimed)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
