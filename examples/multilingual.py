"""One language model per treebank, on its dev part (last step of ``examples/train_languages.sh``).

Each language model (trained on its treebank's training part only) is scored on the dev part
of that treebank, all lengths (``NAME-dev``) and at most 10 words (``NAME10-dev``), with layer 2
and the paper's decoder, beside right- and left-branching trees; sentence F1 in the ON-LSTM and
Kim et al. conventions.  The test parts are left alone: the README's table comes from the
members chosen on dev (rule v7, research/PROTOCOL.md).  Also checks, on the dev text, that
``onparse induce`` with default options reads the gold's own text back unchanged (the round
trip of ``onparse gold-text``).  Writes ``examples/multilingual.md``.

    python examples/multilingual.py runs/lang-alpino/best.pt runs/lang-cess_esp/best.pt runs/lang-floresta/best.pt
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
NAMES = {"alpino": "Dutch (alpino)", "cess_esp": "Spanish (cess_esp)", "floresta": "Portuguese (floresta)"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="best.pt of each language's run (its corpus names the treebank)")
    ap.add_argument("--out", default=os.path.join(HERE, "multilingual.md"))
    args = ap.parse_args(argv)
    from onparse import load
    from onparse import baseline_trees
    from onparse import evaluate
    from onparse.text.tokens import gold_text_line
    from onparse import load_gold

    rows = ["| language | dev sentences | trees | all lengths: sent. F1 | all: Kim F1 | "
            "<= 10 words: sent. F1 | <= 10: Kim F1 |", "|---|---|---|---|---|---|---|"]
    notes = []
    for path in args.models:
        parser = load(path, "cpu")
        meta = parser.metadata
        lang = meta["corpus"]["source"]
        golds = {key: load_gold(f"{lang}{suffix}") for key, suffix in (("all", "-dev"), ("short", "10-dev"))}
        results = {"model": {}, "right": {}, "left": {}}
        for key, gold in golds.items():
            results["model"][key] = parser.score(gold).result
            for kind in ("right", "left"):
                results[kind][key] = evaluate(baseline_trees(gold.tokens, kind, 0), gold, check_tokens=False)
        prep = parser.preprocessor()
        # each changed sentence: the gold words that raw-text reading did not give back
        lost = [set(s.words) - set(got) for s in golds["all"]
                for got in [prep(gold_text_line(s.words)).tokens] if got != list(s.words)]
        note = (f"{NAMES[lang]}: {len(golds['all']) - len(lost)} of {len(golds['all'])} dev sentences of "
                "`onparse gold-text` read back unchanged by `onparse induce` with default options")
        if lost:
            shown = [f"`{w}`" for w in sorted(set().union(*lost))[:3]]
            if not all(lost):
                shown.append("a last word ending in a period, whose free-standing period the model knows as a word")
            note += (f"; the others hold a gold token that raw-text reading splits ({'; '.join(shown)}); "
                     "`induce --pretokenized` reads every one back")
        notes.append(note)
        sizes = f"{len(golds['all']):,} / {len(golds['short']):,}"
        epochs = meta.get("train_config", {}).get("epochs")
        of = f" of {epochs}" if epochs else ""
        values = {key: [r["all"].sentence_f1.f1, r["all"].kim_f1.f1, r["short"].sentence_f1.f1, r["short"].kim_f1.f1]
                  for key, r in results.items()}
        best = [max(column) for column in zip(*values.values())]
        for label, key in ((f"ON-LSTM, layer 2 (valid ppl {meta.get('valid_ppl', 0):.0f}, "
                            f"epoch {meta.get('epoch')}{of})", "model"), ("right-branching", "right"),
                           ("left-branching", "left")):
            # the best of the three rows in bold, per column
            cells = [f"**{100 * v:.1f}**" if v == b else f"{100 * v:.1f}" for v, b in zip(values[key], best)]
            rows.append(f"| {NAMES[lang] if key == 'model' else ''} | {sizes if key == 'model' else ''} | "
                        f"{label} | " + " | ".join(cells) + " |")
    command = "python examples/multilingual.py " + " ".join(os.path.relpath(p, ROOT) for p in args.models)
    block = "\n".join(rows + ["", f"Trained with `bash examples/train_languages.sh` ("
                              "`onparse train --preset small --corpus NAME --epochs 10 --seed 1`); table by "
                              f"`{command}`.", *[f"- {n}" for n in notes]])
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write("# Other languages\n\n" + block + "\n")
    print(block)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
