"""Rule v6 of research/PROTOCOL.md: the campaign's in-domain `small` models, members ranked on the
dev half, K = 1-4 models, a voter or none, ties first or right; bundled when dev says it beats
v5; the test half scored once.

    python research/choose_v6.py --bundle runs/default-v6.pt      # dev: choose, bundle
    python research/choose_v6.py --test --bundle src/onparse/models/default.pt   # test, once
    python research/choose_v6.py --readme                                         # README's table

Reads the dev scores of every kept epoch from research/campaign-dev.jsonl (research/score_epochs.py)
and the checkpoints from runs/small-conll2000-sS/epoch-NNN.pt.  Writes research/dev-trials-v6.tsv
and, with --test, research/test-v6.json (the layout of rule v5's test-v5.json); --readme writes
the README's results table from it.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import choose_members as v5  # noqa: E402  (the helpers of rule v5, shared)

SEEDS = (1, 2, 3, 4, 5)
RUN = os.path.join(ROOT, "runs", "small-conll2000-s{seed}", "epoch-{epoch:03d}.pt")
TRIALS = os.path.join(HERE, "dev-trials-v6.tsv")
TEST = os.path.join(HERE, "test-v6.json")
V5_DEV = 0.4981484263850809


def ranked_members():
    """Rule 30: (dev F1, seed, epoch, layer), best first; ties to the lower seed, epoch, layer."""
    rows = []
    with open(os.path.join(HERE, "campaign-dev.jsonl"), encoding="utf-8") as handle:
        for record in map(json.loads, handle):
            seed = record["seed"]
            if record["corpus"] != "conll2000" or record["preset"] != "small" or seed not in SEEDS:
                continue
            for layer in (2, 3):
                rows.append((record["dev"][f"L{layer} onlstm"]["all"], seed, record["epoch"], layer))
    return sorted(rows, key=lambda r: (-r[0], r[1], r[2], r[3]))


def candidates(ranked):
    """Rule 31: for K = 1..4, the K best members of K different seeds; voters; ties."""
    picks = v5.first_per_seed(ranked)
    out = []
    for k in range(1, 5):
        for voters in ((), ("right",)):
            for ties in ("first", "right"):
                out.append((picks[:k], voters, ties))
    return out


def name_of(members, voters, ties) -> str:
    parts = " + ".join(f"s{seed} e{epoch} L{layer}" for _, seed, epoch, layer in members)
    return parts + "".join(f" + {v}" for v in voters) + f", ties {ties}"


def choose(bundle_path):
    from onparse import load
    from onparse import Member

    ranked = ranked_members()
    cands = candidates(ranked)
    chosen_models = cands[-1][0]                              # the K = 4 members: every model needed
    paths = [RUN.format(seed=seed, epoch=epoch) for _, seed, epoch, _ in chosen_models]
    parser = load(paths, "cpu")
    members = [Member(i, layer, "onlstm") for i, (_, _, _, layer) in enumerate(chosen_models)]
    gold, short_gold, short_index = v5.golds("wsj-sample-dev", "wsj10-sample-dev")
    tokens = [list(s.words) for s in gold]
    per_sentence = parser.with_members(members).member_trees(tokens)
    rows = []
    for order, (picked, voters, ties) in enumerate(cands):
        k = len(picked)
        voting = parser.with_members(members[:k], voters, ties)
        trees = voting.average([t[:k] for t in per_sentence], tokens) if voting.averages else \
            [t[0] for t in per_sentence]
        rows.append({"order": order, "name": name_of(picked, voters, ties), "k": k, "voters": voters,
                     "ties": ties, "trees": k + len(voters), "members": [m.to_dict() for m in members[:k]],
                     "dev": v5.scores_of(trees, gold, short_gold, short_index)})
        print(f"{order + 1:2d}/{len(cands)} {rows[-1]['name']}: {100 * rows[-1]['dev']['all']['sentence_f1']:.2f}",
              file=sys.stderr)
    v5.write_trials(TRIALS, rows, ("trees",))
    best, lm = v5.chosen(rows), v5.chosen(rows, lm_only=True)
    print(f"chosen: {best['name']} (dev {100 * best['dev']['all']['sentence_f1']:.2f}, v5 {100 * V5_DEV:.2f}); "
          f"LM only: {lm['name']} (dev {100 * lm['dev']['all']['sentence_f1']:.2f})", file=sys.stderr)
    if best["dev"]["all"]["sentence_f1"] <= V5_DEV:
        print("v5 stays: the best v6 candidate does not beat it on dev", file=sys.stderr)
        return
    if bundle_path:
        write_bundle(paths[:max(best["k"], lm["k"])], bundle_path, best, lm)


def write_bundle(paths, path, best, lm):
    from onparse import Member
    from onparse import save_bundle
    from onparse.files.checkpoint import load_checkpoint

    blobs = [load_checkpoint(p) for p in paths]
    seeds = [b["metadata"]["train_config"]["seed"] for b in blobs]
    meta = {"recipe": "onparse train --preset small --corpus conll2000 --epochs 8 --seed S --threads 1 --keep-epochs "
                      "(research/train_campaign.sh); this file holds seeds " + ", ".join(map(str, seeds)),
            "selection": "each model: a kept epoch of its seed, chosen with its layer on the dev half of the sample",
            "members_rule": "of 16 candidates (the 1-4 best single members of different seeds on wsj-sample-dev, "
                            "0-1 right-branching voter, ties first or right), the one of highest sentence F1 on "
                            "the dev half, wsj-sample-dev (research/PROTOCOL.md, rule v6)",
            "weights_check": "float16 (four models in 40 MB)",
            "seeds": [{"seed": s, "epoch": b["metadata"].get("epoch"), "valid_ppl": b["metadata"].get("valid_ppl")}
                      for s, b in zip(seeds, blobs)],
            "dev": {"chosen": best["name"], "sentence_f1": best["dev"], "lm_only": lm["name"],
                    "lm_only_members": lm["members"], "lm_only_sentence_f1": lm["dev"],
                    "trials": "research/dev-trials-v6.tsv", "chosen_members": best["members"],
                    "voters": list(best["voters"]), "ties": best["ties"]}}
    save_bundle(path, blobs, [Member(**m) for m in best["members"]], weights="float16", metadata=meta,
                voters=best["voters"], ties=best["ties"])
    print(f"wrote {path} ({len(blobs)} models, float16, {os.path.getsize(path) / 1e6:.1f} MB; {best['name']})",
          file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", default=None)
    ap.add_argument("--test", action="store_true", help="score the shipped bundle on the test half (once)")
    ap.add_argument("--readme", action="store_true", help="write README.md's results table from test-v6.json")
    args = ap.parse_args()
    if args.readme:
        with open(TEST, encoding="utf-8") as handle:
            v5.replace_block(v5.TABLES, v5.readme_block(json.load(handle)))
    elif args.test:
        v5.TEST = TEST
        v5.test(args.bundle or v5.DEFAULT)
    else:
        choose(args.bundle)


if __name__ == "__main__":
    main()
