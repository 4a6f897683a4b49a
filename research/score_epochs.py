"""Score every kept epoch of the campaign's runs on the dev half of the sample (issue 32, point 3).

    python research/score_epochs.py runs/small-conll2000-s1 runs/small-conll2000+press-s1
    python research/score_epochs.py --gold alpino-dev --records research/languages-dev.jsonl runs/small-alpino-s1

For each run folder (of a language model or a grammar, rule v9) and each ``epoch-NNN.pt`` not yet in ``research/campaign-dev.jsonl``, one
record: the run's recipe (preset, corpus, seed), the epoch, its validation perplexity and
training hours (from ``metrics.jsonl``), and sentence F1 (ON-LSTM convention) on
``wsj-sample-dev`` and on its sentences of at most 10 words for every single member (layers
1-3 x both decoders) and the average of layers 2 and 3 (paper decoder) with one right-branching
voter and ties ``right`` (rule v5's shape; an average of one run's two members without a voter
is its first member, so none is recorded).  ``--gold`` names another dev set (``alpino-dev``
for the Dutch runs, rule v7; its sentences of at most 10 words are the ``10`` scores) and
``--records`` another file.  Dev may choose anything; the test half is never read here.  ``--table`` prints the records as a Markdown table.
"""
import argparse
import glob
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDS = os.path.join(HERE, "campaign-dev.jsonl")
#: Averages of one run's layers 2 and 3 (paper decoder).  Without a voter, ties ``first`` would
#: return the first member's tree (two members can outvote nobody), so only the voted one is kept.
AVERAGES = {"avg L2,3 onlstm + right, ties right": (("right",), "right")}


def run_log(run: str) -> dict:
    """``{"recipe": ..., "epochs": {epoch: {"valid_ppl", "hours"}}}`` from a run's metrics.jsonl."""
    from onparse.files.training_log import read_log

    log = read_log(run)
    hours = log.hours()
    recipe = {"preset": log.preset, "corpus": log.corpus, "seed": log.seed,
              "hidden_size": (log.config or {}).get("hidden_size")}
    return {"recipe": recipe, "epochs": {e: {"valid_ppl": ppl, "hours": hours[e]}
                                         for e, ppl in zip(log.epochs, log.valid_ppl)}}


def done(records: str = RECORDS) -> set:
    if not os.path.exists(records):
        return set()
    with open(records, encoding="utf-8") as handle:
        return {(r["run"], r["epoch"]) for r in map(json.loads, handle)}


def key(member) -> str:
    """A member's record key: ``L2 onlstm`` for a language model's, its reading otherwise
    (``grammar``, ``grammar viterbi``)."""
    return member.reading.replace("layer ", "L", 1)


def score(path: str, gold, short_index, decoders="all", device="cpu") -> dict:
    """Dev sentence F1 (all lengths, <= 10 words) of every member the model gives (a language
    model: every layer x decoder; a grammar: each decoder) and of its voted average: layers 2
    and 3 (paper decoder) of a language model, a grammar's MBR tree, with one right-branching
    voter and ties ``right``."""
    from onparse import load
    from onparse import evaluate

    parser = load(path, device)
    members = parser.models[0].grid(0, "all", decoders)
    parser = parser.with_members(members)
    tokens = [list(s.words) for s in gold]
    per_sentence = parser.member_trees(tokens)
    short_gold = [gold[i] for i in short_index]

    def f1(trees):
        return {"all": round(evaluate(trees, gold).sentence_f1.f1, 5),
                "10": round(evaluate([trees[i] for i in short_index], short_gold).sentence_f1.f1, 5)}

    keys = [key(m) for m in members]
    out = {k: f1([t[i] for t in per_sentence]) for i, k in enumerate(keys)}
    averaged = [keys.index(k) for k in ("L2 onlstm", "L3 onlstm") if k in keys] or [0]
    for name, (voters, ties) in AVERAGES.items():
        voting = parser.with_members([members[i] for i in averaged], voters, ties)
        out[name if len(averaged) > 1 else f"{keys[0]} + right, ties right"] = f1(
            voting.average([[t[i] for i in averaged] for t in per_sentence], tokens))
    return out


def table(records: str = RECORDS) -> str:
    with open(records, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    keys = list(dict.fromkeys(k for r in rows for k in r["dev"]))
    lines = ["| run | epoch | hours | valid ppl | " + " | ".join(keys) + " |",
             "|---|---|---|---|" + "---|" * len(keys)]
    for r in rows:
        cells = [f"{100 * r['dev'][k]['all']:.1f} / {100 * r['dev'][k]['10']:.1f}" if k in r["dev"] else "-"
                 for k in keys]
        lines.append(f"| {r['run']} | {r['epoch']} | {r['hours']:.2f} | {r['valid_ppl']:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*")
    ap.add_argument("--table", action="store_true", help="print the records as a Markdown table")
    ap.add_argument("--gold", default="wsj-sample-dev", help="the dev set [default: wsj-sample-dev]")
    ap.add_argument("--decoders", default="all",
                    help="decoders to score, comma-separated (rule v9 scores grammars by mbr only) [default: all]")
    ap.add_argument("--records", default=RECORDS, help="the JSON-lines file of scores [default: campaign-dev.jsonl]")
    ap.add_argument("--device", default="cpu", help="where the models parse (cpu, cuda) [default: cpu]")
    ap.add_argument("--until", metavar="FILE",
                    help="keep scoring new epochs as the runs write them (every 10 s) until FILE exists, then "
                         "score what is left once more and stop (runs still training)")
    args = ap.parse_args()
    if args.table:
        print(table(args.records))
        return
    if "test" in args.gold:
        ap.error("only a dev set may be scored here")
    from onparse import load_gold

    gold = load_gold(args.gold)
    short_index = [i for i, s in enumerate(gold) if len(s) <= 10]
    while True:
        finished = args.until is not None and os.path.exists(args.until)
        score_new(args.runs, gold, short_index, args.records, args.decoders, args.device)
        if args.until is None or finished:
            return
        time.sleep(10)


def score_new(runs, gold, short_index, records, decoders, device="cpu"):
    """One record for every kept epoch of ``runs`` not yet in ``records``; a run with no
    finished epoch yet is passed over (it may still be training)."""
    from onparse import OnparseError

    seen = done(records)
    for run in runs:
        try:
            log = run_log(run)
        except OnparseError:
            continue
        name = os.path.basename(os.path.normpath(run))
        for path in sorted(glob.glob(os.path.join(run, "epoch-*.pt"))):
            epoch = int(re.search(r"epoch-(\d+)\.pt$", path).group(1))
            if (name, epoch) in seen or epoch not in log["epochs"]:
                continue
            record = {"run": name, **log["recipe"], "epoch": epoch, **log["epochs"][epoch],
                      "dev": score(path, gold, short_index,
                                   "all" if decoders == "all" else decoders.split(","), device)}
            with open(records, "a", encoding="utf-8") as out:
                out.write(json.dumps(record) + "\n")
            best = max(record["dev"].items(), key=lambda kv: kv[1]["all"])
            print(f"{name} epoch {epoch}: valid ppl {record['valid_ppl']:.1f}, dev best {best[0]} "
                  f"{100 * best[1]['all']:.1f}", file=sys.stderr)

if __name__ == "__main__":
    main()
