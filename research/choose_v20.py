"""Rule v20 of research/PROTOCOL.md (106-109): more English grammars of rule v9's 10,000-word
recipe, a new teacher chosen on the sample's dev half (rules 102-105 with these members and a
group (f), the K best added to rule v9's teacher), its students; the test half scored once.

    python research/choose_v20.py              # dev: every candidate; writes
                                               # research/dev-trials-v20.tsv, research/dev-choice-v20.json
    python research/choose_v20.py --list       # the candidates only, nothing scored
    python research/choose_v20.py teacher      # the choice's trees of news-train.txt
    python research/choose_v20.py train S      # student S (1, 2), six epochs kept
    python research/choose_v20.py final        # the final choice among (a) and the snapshots;
                                               # research/dev-trials-v20-students.tsv,
                                               # research/dev-choice-v20-students.json
    python research/choose_v20.py --test       # once: research/test-v20.json

Grammar members: every (run, epoch) of research/grammar-v20-dev.jsonl (rule 108, runs
runs/grammar-v20-news-sS, S = 4-7).  The steps are research/english_grammars.py's.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import english_grammars as eg  # noqa: E402

RULE = eg.Rule("v20", "grammar-v20-news-s{seed}", (4, 5, 6, 7), eg.GROUPS + (eg.TEACHER_GROUP,))

if __name__ == "__main__":
    eg.main(RULE, __doc__)
