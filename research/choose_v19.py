"""Rule v19 of research/PROTOCOL.md (99-105): English grammars with rule v18's `v2k-c10` recipe,
a new teacher chosen on the sample's dev half, its students; the test half scored once.

    python research/choose_v19.py              # rules 102-103, dev: every candidate; writes
                                               # research/dev-trials-v19.tsv, research/dev-choice-v19.json
    python research/choose_v19.py --list       # the candidates only, nothing scored
    python research/choose_v19.py teacher      # rule 104: the choice's trees of news-train.txt
    python research/choose_v19.py train S      # rule 104: student S (1, 2), six epochs kept
    python research/choose_v19.py final        # rule 104: the final choice among (a) and the
                                               # snapshots; research/dev-trials-v19-students.tsv,
                                               # research/dev-choice-v19-students.json
    python research/choose_v19.py --test       # rule 105, once: research/test-v19.json

Grammar members: every (run, epoch) of research/grammar-v19-dev.jsonl (rule 101, runs
runs/grammar-v19-news-v2k-c10-sS).  The steps are research/english_grammars.py's.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import english_grammars as eg  # noqa: E402

RULE = eg.Rule("v19", "grammar-v19-news-v2k-c10-s{seed}", (1, 2, 3))

if __name__ == "__main__":
    eg.main(RULE, __doc__)
