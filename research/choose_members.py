"""Rule v5 of research/PROTOCOL.md: choose members, voters and tie rule on the dev half of the
sample, bundle the choice, and (with --test, once) score it on the test half.

    python research/choose_members.py --bundle src/onparse/models/default.pt     # dev: choose, bundle
    python research/choose_members.py --test                                    # test: score, once
    python research/choose_members.py --readme                                  # README's table

The first reads the models of ``--models`` (default: the shipped bundle), scores every candidate
of rule 26 on ``wsj-sample-dev`` (member trees computed once, then averaged per candidate),
writes every candidate's dev scores to ``research/dev-trials-v5.tsv``, and writes the chosen
candidate as a bundle (the same models, their stored weights unchanged).  The second scores the
shipped bundle, the LM-only candidate and right-branching on ``wsj-sample-test`` and
``wsj10-sample-test``, writes ``research/test-v5.json`` and records the scores in the bundle.
The third writes the README's results table from that file (no scoring).
"""
import argparse
import itertools
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
#: Where the rules' results tables live (``--readme`` writes them there): the README is a user's page.
TABLES = os.path.join(HERE, "RESULTS.md")
DEFAULT = os.path.join(ROOT, "src", "onparse", "models", "default.pt")
TRIALS = os.path.join(HERE, "dev-trials-v5.tsv")
TEST = os.path.join(HERE, "test-v5.json")

LAYER_SETS = ((2,), (3,), (2, 3), (1, 2, 3))
DECODER_SETS = (("onlstm",), ("split",), ("onlstm", "split"))
VOTER_SETS = ((), ("right",), ("right", "right"))
TIE_RULES = ("first", "right", "left")
CONVENTIONS = (("sentence_f1", "sent. F1 (ON-LSTM)"), ("kim_f1", "sent. F1 (Kim)"), ("corpus_f1", "corpus F1"))
#: The keys `onparse info` and the bundle's metadata use for the same figures, and EVALB's.
RECORD_KEYS = {"sentence_f1_onlstm": "sentence_f1", "sentence_f1_kim": "kim_f1", "corpus_f1": "corpus_f1",
               "corpus_f1_evalb": "evalb_f1"}


def candidates():
    """Rule 26's candidates, in its order: (layers, decoders, voters, ties)."""
    return list(itertools.product(LAYER_SETS, DECODER_SETS, VOTER_SETS, TIE_RULES))


def name_of(layers, decoders, voters, ties) -> str:
    voted = "".join(f" + {v}" for v in voters)
    return f"L{','.join(map(str, layers))} {'+'.join(decoders)}{voted}, ties {ties}"


def scores_of(trees, gold, short_gold, short_index) -> dict:
    """Sentence F1 (both conventions) and corpus F1, all lengths and at most 10 words."""
    from onparse import evaluate

    out = {}
    for key, g, t in (("all", gold, trees), ("10", short_gold, [trees[i] for i in short_index])):
        result = evaluate(t, g)
        out[key] = {conv: getattr(result, conv).f1 for conv, _ in CONVENTIONS}
    return out


def golds(name, short_name):
    """``(gold, short_gold, short_index)``: a gold set, its part of at most 10 words (a gold set of
    its own), and where those sentences are in the whole (checked to be the same sentences)."""
    from onparse import load_gold

    gold, short_gold = load_gold(name), load_gold(short_name)
    short_index = [i for i, s in enumerate(gold) if len(s) <= 10]
    assert [gold[i].tokens for i in short_index] == short_gold.tokens
    return gold, short_gold, short_index


def read_sentences(path, first):
    """The sentences ``onparse distill PATH --pretokenized -m FIRST`` learns from (rules 82 and
    104): each line split on whitespace, punctuation ``first``'s vocabulary lacks dropped, lines
    left with fewer than two words passed over."""
    from onparse import load
    from onparse.student.config import MIN_WORDS

    with open(path, encoding="utf-8") as handle:
        lines = [line.rstrip("\n") for line in handle]
    return [tokens for tokens in load(first, "cpu").tokens(lines, tokenize=False) if len(tokens) >= MIN_WORDS]


def baseline_scores(gold, short_gold, short_index) -> dict:
    """``{"right": ..., "left": ...}``: :func:`scores_of` of right- and left-branching trees, the
    baselines every rule's test step reports beside its choice (rules v7-v13)."""
    from onparse import baseline_trees

    return {kind: scores_of(baseline_trees(gold.tokens, kind, 0), gold, short_gold, short_index)
            for kind in ("right", "left")}


def scored_once(path, rule) -> None:
    """Exit when ``path`` (a rule's test record) exists: each rule scores its test part once."""
    if os.path.exists(path):
        sys.exit(f"{path} exists: the test part is scored once ({rule})")


#: The head of an "Other languages" table (rules v7 and v13): per entry, three conventions at
#: all lengths and at most 10 words.
LANGUAGE_TABLE_HEAD = [
    "| language | test sentences (all / <= 10) | trees | all lengths: sent. F1 | all: Kim F1 | all: corpus F1 | "
    "<= 10 words: sent. F1 | <= 10: Kim F1 | <= 10: corpus F1 |", "|---|---|---|---|---|---|---|---|---|"]


def language_rows(label, sentences, entries) -> list:
    """One language's rows of that table: ``entries`` ``[(name, scores)]`` with :func:`scores_of`'s
    figures, each column's best in bold, the language and its test sentences on the first row."""
    values = [[s[part][conv] for part in ("all", "10") for conv in ("sentence_f1", "kim_f1", "corpus_f1")]
              for _, s in entries]
    best = [max(column) for column in zip(*values)]
    rows = []
    for i, ((name, _), vals) in enumerate(zip(entries, values)):
        cells = [f"**{100 * v:.1f}**" if v == b else f"{100 * v:.1f}" for v, b in zip(vals, best)]
        first = f"{label} | {sentences[0]:,} / {sentences[1]:,}" if i == 0 else " | "
        rows.append(f"| {first} | {name} | " + " | ".join(cells) + " |")
    return rows


def language_block(r, v7_result, label, rule, second) -> list:
    """One language's rows of the "Other languages" table from a rule's test record ``r``: the
    rule's choice, its ``second`` entry (``(key in r, label)``: the grammar or the student alone),
    rule v7's choice (``v7_result``, its record) and right-branching."""
    key, label_of_second = second
    entries = [(f"chosen on dev (rule {rule}): {r['candidate']}", r["chosen"]),
               (f"{label_of_second}: {r[key]['name']}", r[key]),
               (f"rule v7's choice: {v7_result['chosen']['name']}", v7_result["chosen"]["test"]),
               ("right-branching", r["right"])]
    return language_rows(label, r["sentences"], entries)


def languages_table(results, v7_results, languages, rule, second, footer) -> str:
    """The README's "Other languages" table (rules v13 and v15) from a rule's test record and
    rule v7's: per language (``languages``: name -> label), :func:`language_block`'s rows, then
    the ``footer`` line."""
    rows = list(LANGUAGE_TABLE_HEAD)
    for lang, label in languages.items():
        rows += language_block(results[lang], v7_results[lang], label, rule, second)
    return "\n".join(rows + ["", footer])


def write_languages_table(test_path, v7_test_path, block) -> None:
    """README.md's "Other languages" table: ``block(results, v7_results)`` of the JSON records at
    ``test_path`` (a rule's test) and ``v7_test_path`` (rule v7's)."""
    with open(test_path, encoding="utf-8") as handle:
        results = json.load(handle)
    with open(v7_test_path, encoding="utf-8") as handle:
        v7_results = json.load(handle)
    replace_block(TABLES, block(results, v7_results), "multilingual")


def write_trials(path, rows, columns=(), lead=None) -> None:
    """Every candidate's dev scores as a TSV (rules v5-v15): the ``lead`` column of each row if
    given (the language, rules v7, v13, v15), order, name, the ``columns`` of each row, then
    sentence F1 in both conventions and corpus F1, all lengths and at most 10 words."""
    first = [lead] if lead else []
    with open(path, "w", encoding="utf-8") as out:
        out.write("".join(f"{c}\t" for c in first) + "order\tcandidate\t" + "".join(f"{c}\t" for c in columns)
                  + "dev all sent F1\tdev all Kim F1\tdev all corpus F1\t"
                  "dev <=10 sent F1\tdev <=10 Kim F1\tdev <=10 corpus F1\n")
        for r in rows:
            cells = [f"{100 * r['dev'][k][c]:.2f}" for k in ("all", "10") for c, _ in CONVENTIONS]
            out.write("".join(f"{r[c]}\t" for c in first) + f"{r['order'] + 1}\t{r['name']}\t"
                      + "".join(f"{r[c]}\t" for c in columns) + "\t".join(cells) + "\n")


def log_choice(lead, row) -> None:
    """``LEAD: chosen NAME (dev F1)`` on stderr: a dev step's choice as it is made."""
    print(f"{lead}: chosen {row['name']} (dev {100 * row['dev']['all']['sentence_f1']:.2f})", file=sys.stderr)


def record_dev(trials_path, rows, choice_path, choice, columns=("trees",), lead=None) -> None:
    """A rule's dev step recorded: every candidate's scores (:func:`write_trials`) and the choice
    (a dict, as JSON)."""
    write_trials(trials_path, rows, columns, lead)
    with open(choice_path, "w", encoding="utf-8") as out:
        json.dump(choice, out, indent=1)


def every_member(n_models, layers, decoders):
    """Every model x layer x decoder, in that order: the members the candidates are drawn from."""
    from onparse import Member

    return [Member(m, layer, d) for m in range(n_models) for layer in layers for d in decoders]


def first_per_seed(ranked):
    """The best-ranked row of each seed (``row[1]``), in rank order (rules 31 and 38)."""
    picks, seen = [], set()
    for row in ranked:
        if row[1] not in seen:
            picks.append(row)
            seen.add(row[1])
    return picks


def chosen(rows, lm_only=False):
    """Rule 27: the highest dev all-lengths sentence F1; exact ties to fewer trees, then order."""
    pool = [r for r in rows if not lm_only or (not r["voters"] and r["ties"] == "first")]
    return max(pool, key=lambda r: (r["dev"]["all"]["sentence_f1"], -r["trees"], -r["order"]))


def choose(models, bundle_path):
    from onparse import load

    parser = load(models, "cpu")
    gold, short_gold, short_index = golds("wsj-sample-dev", "wsj10-sample-dev")
    every = every_member(len(parser.models), (1, 2, 3), ("onlstm", "split"))
    tokens = [list(s.words) for s in gold]
    t0 = time.time()
    per_sentence = parser.with_members(every).member_trees(tokens)
    print(f"member trees of {len(tokens):,} dev sentences in {time.time() - t0:.0f} s", file=sys.stderr)
    rows = []
    for order, (layers, decoders, voters, ties) in enumerate(candidates()):
        members = every_member(len(parser.models), layers, decoders)
        picks = [every.index(m) for m in members]
        voting = parser.with_members(members, voters, ties)
        trees = voting.average([[t[k] for k in picks] for t in per_sentence], tokens)
        rows.append({"order": order, "name": name_of(layers, decoders, voters, ties), "layers": layers,
                     "decoders": decoders, "voters": voters, "ties": ties, "trees": len(members) + len(voters),
                     "members": [m.to_dict() for m in members],
                     "dev": scores_of(trees, gold, short_gold, short_index)})
        print(f"{order + 1:3d}/{len(candidates())} {rows[-1]['name']}: "
              f"{100 * rows[-1]['dev']['all']['sentence_f1']:.1f}", file=sys.stderr)
    with open(TRIALS, "w") as out:
        out.write("order\tcandidate\ttrees\tdev all sent F1\tdev all Kim F1\tdev all corpus F1\t"
                  "dev <=10 sent F1\tdev <=10 Kim F1\tdev <=10 corpus F1\n")
        for r in rows:
            cells = [f"{100 * r['dev'][k][c]:.2f}" for k in ("all", "10") for c, _ in CONVENTIONS]
            out.write(f"{r['order'] + 1}\t{r['name']}\t{r['trees']}\t" + "\t".join(cells) + "\n")
    best, lm = chosen(rows), chosen(rows, lm_only=True)
    print(f"chosen: {best['name']} (dev {100 * best['dev']['all']['sentence_f1']:.2f}); "
          f"LM only: {lm['name']} (dev {100 * lm['dev']['all']['sentence_f1']:.2f})", file=sys.stderr)
    if bundle_path:
        write_bundle(models, bundle_path, best, lm)
    return best, lm


def write_bundle(models, path, best, lm):
    from onparse import Member
    from onparse.files.bundle import load_model_file, save_bundle

    blobs, meta = [], None
    for model in models:
        blob = load_model_file(model)
        if meta is None:
            meta = dict(blob.get("metadata") or {})
        blobs.extend(blob["models"] if "models" in blob else [blob])
    weights = {entry["metadata"].get("weights", "float32") for entry in blobs}
    kind = weights.pop() if len(weights) == 1 else "float32"
    meta.pop("scores", None)
    meta["selection"] = ("each model: its seed's epoch of lowest validation perplexity on news (no gold trees); "
                         "members, voters and tie rule: on the dev half of the sample (below)")
    meta["members_rule"] = ("of 108 candidates (layers 2/3/1-3, decoders, 0-2 right-branching voters, tie rule), the one "
                            "of highest sentence F1 on the dev half of the sample, wsj-sample-dev (research/PROTOCOL.md)")
    meta["dev"] = {"chosen": best["name"], "sentence_f1": best["dev"], "lm_only": lm["name"],
                   "lm_only_members": lm["members"], "lm_only_sentence_f1": lm["dev"]}
    save_bundle(path, blobs, [Member(**m) for m in best["members"]], weights=kind, metadata=meta,
                voters=best["voters"], ties=best["ties"])
    print(f"wrote {path} ({len(blobs)} models, {kind}; {best['name']})", file=sys.stderr)


def test(bundle_path):
    """Score the shipped bundle, its LM-only candidate and right-branching on the test half."""
    from onparse import load
    from onparse import baseline_trees
    from onparse import Member
    from onparse import evaluate
    from onparse import load_gold

    parser = load(bundle_path, "cpu")
    dev = parser.metadata["dev"]
    lm = parser.with_members([Member(**m) for m in dev["lm_only_members"]], voters=(), ties="first")
    report = {"bundle": os.path.relpath(bundle_path, ROOT), "chosen": dev["chosen"], "lm_only": dev["lm_only"],
              "dev": {"chosen": dev["sentence_f1"], "lm_only": dev["lm_only_sentence_f1"]}, "test": {}}
    recorded = []
    for name in ("wsj-sample-test", "wsj10-sample-test"):
        gold = load_gold(name)
        rows = {}
        results = {"chosen": parser.score(gold).result, "lm_only": lm.score(gold).result,
                   "right": evaluate(baseline_trees(gold.tokens, "right"), gold, check_tokens=False)}
        for label, result in results.items():
            rows[label] = {conv: getattr(result, conv).f1 for conv in RECORD_KEYS.values()}
        rows["n"] = len(gold)
        report["test"][name] = rows
        recorded.append({"gold": name, "trees": parser.describe_average(),
                         **{key: rows["chosen"][conv] for key, conv in RECORD_KEYS.items()}})
    record_scores(bundle_path, recorded)
    with open(TEST, "w") as out:
        json.dump(report, out, indent=2)
        out.write("\n")
    for name, rows in report["test"].items():
        print(name, {k: (round(100 * v["sentence_f1"], 1) if isinstance(v, dict) else v) for k, v in rows.items()})


def to_ship(choice_path, test_path, refusal):
    """A rule's dev choice that ships and its test figures (rules v11, v17): the two recorded
    files, read; ``refusal`` is the exit message when the choice does not ship."""
    with open(choice_path, encoding="utf-8") as handle:
        decided = json.load(handle)
    if not decided["ships"]:
        sys.exit(refusal)
    with open(test_path, encoding="utf-8") as handle:
        return decided, json.load(handle)


def student_file(run_path, kept_path, seed, epoch):
    """A chosen student snapshot: in its run folder, or where it is kept in the repository when
    runs/ did not survive."""
    path = run_path.format(seed=seed, epoch=epoch)
    return path if os.path.exists(path) else kept_path.format(seed=seed, epoch=epoch)


def ship_bundle(target, models, members, voters, ties, meta, tested, label) -> None:
    """Write the bundled model (rules v11 and v17): the loaded ``models`` (their weights and
    checksum metadata dropped; float16), read by ``members`` with ``voters`` and ``ties``, its
    metadata ``meta``.  The figures `onparse info` shows are the written file's own, on the test
    half the rule scored once (``tested``: those scores, by "all" and "10"): the same trees
    measured again, chosen from never."""
    from onparse import load
    from onparse.files.bundle import save_bundle
    from onparse.files.checkpoint import DIGEST_KEY

    entries = []
    for model in models:
        entry = model.entry()
        entry["metadata"] = {k: v for k, v in entry["metadata"].items() if k not in ("weights", DIGEST_KEY)}
        entries.append(entry)
    save_bundle(target, entries, members, weights="float16", metadata=meta, voters=voters, ties=ties)
    shipped = load(target, "cpu")
    rows = []
    for gold in ("wsj-sample-test", "wsj10-sample-test"):
        result = shipped.score(gold).result
        rows.append({"gold": gold, "trees": shipped.describe_average(),
                     **{key: getattr(result, conv).f1 for key, conv in RECORD_KEYS.items()}})
        print(f"{gold}: {100 * rows[-1]['sentence_f1_onlstm']:.2f} (as scored once: "
              f"{100 * tested['all' if '10' not in gold else '10']['sentence_f1']:.2f})", file=sys.stderr)
    record_scores(target, rows)
    print(f"wrote {target} ({os.path.getsize(target) / 1e6:.1f} MB; {label})", file=sys.stderr)


def record_scores(bundle_path, rows):
    """Write the test-half scores into the bundle's metadata (``onparse info`` shows them; its
    weights and their checksums are untouched)."""
    from onparse.files.bundle import load_model_file
    from onparse.files.checkpoint import write_atomically

    blob = load_model_file(bundle_path)
    blob["metadata"]["scores"] = rows
    blob["metadata"]["scores_gold"] = "the test half of the sample (section 01), never chosen from"
    write_atomically(bundle_path, blob)


#: The released paper models (1000 epochs, PTB-trained), layer 2, on the sample's 555 WSJ10
#: sentences (issue 32; transductive: the sample is in PTB's training sections).
PAPER_SAMPLE_WSJ10 = (65.9, 61.8, 67.4, 66.6)
TARGETS = "all lengths >= 50.0 and >= right-branching + 10; at most 10 words >= right-branching + 8; " \
          "LM only, all lengths >= right-branching + 4"


def table_lines(head, rows) -> list:
    """A results table's lines: the ``head`` cells, then ``rows`` of (label, six F1 values in
    [0, 1], bold), then the paper's released models' WSJ10 figure in the fourth column."""
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for label, values, bold in rows:
        cells = [f"{100 * v:.1f}" for v in values]
        lines.append("| " + " | ".join([label] + [f"**{c}**" if bold else c for c in cells]) + " |")
    mean = sum(PAPER_SAMPLE_WSJ10) / len(PAPER_SAMPLE_WSJ10)
    lines.append(f"| *paper's released models, layer 2 (4 runs; WSJ10 of the whole sample, which they trained on)* "
                 f"| | | | *{mean:.1f} ({min(PAPER_SAMPLE_WSJ10)}-{max(PAPER_SAMPLE_WSJ10)})* | | |")
    return lines


def readme_block(report) -> str:
    """The README's results table (test half, three conventions) from research/test-v5.json."""
    test = report["test"]
    cols = [(gold, conv) for gold in ("wsj-sample-test", "wsj10-sample-test") for conv, _ in CONVENTIONS]
    head = ["trees"] + [f"{'all lengths' if '10' not in g else '<= 10 words'} ({test[g]['n']:,}): {title}"
                        for g, _ in cols[::3] for _, title in CONVENTIONS]
    rows = [("**onparse bundled model**: " + report["chosen"], "chosen", True),
             ("its language models alone: " + report["lm_only"], "lm_only", False),
             ("right-branching", "right", False)]
    lines = table_lines(head, [(label, [test[g][key][c] for g, c in cols], bold) for label, key, bold in rows])
    rb, ours, lm = (test["wsj-sample-test"][k]["sentence_f1"] for k in ("right", "chosen", "lm_only"))
    rb10, ours10 = (test["wsj10-sample-test"][k]["sentence_f1"] for k in ("right", "chosen"))
    lines += ["", f"Targets (issue 32): {TARGETS}.  Met: all lengths {100 * ours:.1f} against "
              f"{max(50.0, 100 * rb + 10):.1f} ({'met' if 100 * ours >= max(50.0, 100 * rb + 10) else 'not met'}); "
              f"at most 10 words {100 * ours10:.1f} against {100 * rb10 + 8:.1f} "
              f"({'met' if ours10 >= rb10 + 0.08 else 'not met'}); LM only {100 * lm:.1f} against "
              f"{100 * rb + 4:.1f} ({'met' if lm >= rb + 0.04 else 'not met'})."]
    return "\n".join(lines)


def results_table(rows, sentences) -> str:
    """The README's results table of the test half (rules v11, v17): ``rows`` of (label, scores,
    bold), the first the bundled model's; three conventions, all lengths and <= 10 words; the
    paper's released models' WSJ10 figure; and issue 38's targets met or not."""
    cols = [(part, conv) for part in ("all", "10") for conv, _ in CONVENTIONS]
    n_all, n_short = sentences
    head = ["trees"] + [f"{'all lengths' if part == 'all' else '<= 10 words'} ({n:,}): {title}"
                        for part, n in (("all", n_all), ("10", n_short)) for _, title in CONVENTIONS]
    lines = table_lines(head, [(label, [scores[part][conv] for part, conv in cols], bold)
                               for label, scores, bold in rows])
    ours, ours10 = (100 * rows[0][1][part]["sentence_f1"] for part in ("all", "10"))
    lines += ["", f"Targets (issue 38): all lengths >= 60.0, at most 10 words >= 72.0.  All lengths {ours:.2f} "
              f"({'met' if ours >= 60.0 else 'not met'}); at most 10 words {ours10:.2f} "
              f"({'met' if ours10 >= 72.0 else 'not met'})."]
    return "\n".join(lines)


def replace_block(path: str, block: str, name: str = "results") -> None:
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if start not in text or end not in text:
        sys.exit(f"error: {path} lacks the {start} ... {end} markers")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f"{head}{start}\n{block}\n{end}{tail}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=[DEFAULT], help="checkpoints or bundles whose models are used")
    ap.add_argument("--bundle", default=None, help="write the chosen candidate here")
    ap.add_argument("--test", action="store_true", help="score the shipped bundle on the test half (once)")
    ap.add_argument("--readme", action="store_true", help="write README.md's results table from test-v5.json")
    args = ap.parse_args()
    if args.readme:
        with open(TEST, encoding="utf-8") as handle:
            replace_block(TABLES, readme_block(json.load(handle)))
    elif args.test:
        test(args.bundle or DEFAULT)
    else:
        choose(args.models, args.bundle)


if __name__ == "__main__":
    main()
