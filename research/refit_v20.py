"""Rule v20 (PROTOCOL.md 108): `onparse fit TEXT --seeds 2 --grammars 3 --max-time 2h` of a small
text, whose grammars fit now trains with rule v18's `v2k-c10` recipe, over runs already trained
with the command that fit runs (rule v14's refit, other grammars).

    python research/refit_v20.py alpino       # runs/fit-alpino-v20.fit -> runs/fit-alpino-v20.pt

lm-S links to rule v10's fit runs (runs/fit-L.fit/lm-S), as under rule v14; grammar-S to
runs/grammar-v18-L-v2k-c10-sS (rule 94's runs, seeds 1 and 2; seed 3 by rule 108).  Besides
rule 79's checks, the plan must give the grammars the small-text options, and each grammar run
must have trained with them.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import refit_v14 as v14  # noqa: E402  (the refit: real plan, checked links, resume)

RECIPE = "v2k-c10"


def sources(language):
    """Fit run name -> the trained run folder it links to."""
    out = {f"lm-{s}": os.path.join(v14.RUNS, f"fit-{language}.fit", f"lm-{s}") for s in (1, 2)}
    out.update({f"grammar-{s}": os.path.join(v14.RUNS, f"grammar-v18-{language}-{RECIPE}-s{s}") for s in (1, 2, 3)})
    return out


def check_plan(plan, links):
    """The plan's grammar options are the small-text recipe, and every grammar run trained with it."""
    from onparse.files.training_log import read_log
    from onparse.fitting.pipeline import SMALL_TEXT_GRAMMAR

    assert plan.get("grammar_options") == list(SMALL_TEXT_GRAMMAR), plan.get("grammar_options")
    for run, folder in links.items():
        if run.startswith("grammar-"):
            config = read_log(folder).config or {}
            got = (config.get("max_vocab"), config.get("curriculum_start"))
            assert got == (2000, 10), f"{run}: {folder} trained with max_vocab, curriculum_start = {got}"


def main(language):
    links = sources(language)
    return v14.refit(language, "v20", links, lambda plan: check_plan(plan, links))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
