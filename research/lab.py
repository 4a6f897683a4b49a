"""The lab's one runner: selection rules as short records (``research/rules.toml``), verbs over them.

    python research/lab.py list                  # every rule, and where it stands
    python research/lab.py train v23 --seeds 1,2 # a rule's runs, two side by side, each resumed where it stopped
    python research/lab.py dev v23               # every kept epoch of its runs scored on its dev part, then its choice
    python research/lab.py test v23              # its choice scored on its test part, once (a second time is refused)
    python research/lab.py readme v23            # its table, in Markdown, from the records
    python research/lab.py ship v23 OUT.pt       # its choice written as a model file
    python research/lab.py replay                # every rule's recorded dev scores give its recorded choice
    python research/lab.py shipped               # the shipped model against its rule's digest (never writes it)
    python research/lab.py model [OUT]           # the shipped model rebuilt from its recorded parts (records/shipped.json)

**Records** (``research/records/``): ``trials.tsv``, every candidate a rule scored on dev (rules
v5-v20: the rows their scripts wrote); ``choices.json`` and ``tests.json``, each rule's dev choice
and its one test scoring, by rule; ``dev.jsonl``, every kept epoch's dev scores (``source``: the
file or rule that scored it); ``fits.jsonl``, ``onparse fit``'s rules (v10-v22); ``tables.json``
and ``reports.md``, the early rules' reports.  The scripts that wrote them until rule v22 are kept
at the git tag ``lab-scripts-v22``.

**A rule** names its gold set (``<gold>-dev`` chooses, ``<gold>-test`` is scored once), its runs
(a folder pattern over seeds and the command that trains one), how its candidates are read
(``decoders``) and its choice, a rule of ``onparse.selection.RULES`` (the one selection pipeline
that ``onparse fit`` runs too: its tree table reads the candidates, its scorer scores them).
Every candidate is a (run, epoch, member) of an ``epoch-NNN.pt`` the runs kept.  Two other kinds:
an **average** rule (``kind = "average"``) scores averages of named model files (``parts``: a path or
``git:COMMIT:PATH``) and another rule's grammars (``grammars``: each seed's epoch of lowest
validation perplexity, K of different seeds), with voters and tie rules, one ``trials.tsv`` row
each; a **students** rule (``teacher``) trains ``onparse distill`` runs on a corpus's text and the
teacher rule's choice (its bundle and trees made once by ``train``), and chooses among them, the
teacher and the teacher rule's incumbent.  Dev may choose anything; the test part is read by
``test`` alone, once per rule.

This script imports only ``onparse``'s public names.
"""
from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import time
import tomllib
from typing import Any, Callable, Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RULES = os.path.join(HERE, "rules.toml")
RECORDS = os.path.join(HERE, "records")
EPOCH = re.compile(r"epoch-(\d+)\.pt$")
#: The recorded F1 columns of trials.tsv: the first chooses.
DEV_COLUMN = "dev all sent F1"


# -- records ---------------------------------------------------------------------------------------
def rules(path: str = RULES) -> Dict[str, Dict[str, Any]]:
    """Every rule record, by name (``v23``)."""
    with open(path, "rb") as handle:
        return tomllib.load(handle)


def read_json(name: str, records: str = RECORDS) -> Dict[str, Any]:
    path = os.path.join(records, name)
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def write_json(name: str, value: Dict[str, Any], records: str = RECORDS) -> None:
    path = os.path.join(records, name)
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        handle.write(json.dumps(value, indent=1) + "\n")
    os.replace(path + ".tmp", path)


def read_jsonl(name: str, records: str = RECORDS) -> List[Dict[str, Any]]:
    path = os.path.join(records, name)
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def append_jsonl(name: str, row: Dict[str, Any], records: str = RECORDS) -> None:
    with open(os.path.join(records, name), "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")


def trials(records: str = RECORDS) -> List[Dict[str, str]]:
    with open(os.path.join(records, "trials.tsv"), encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def choice_rule(name: str) -> Callable[[Sequence[float]], int]:
    """A choice rule by name, from the library's selection pipeline: (dev F1 of the candidates in
    order) -> the index chosen."""
    from onparse import selection

    return selection.RULES[name]


def recorded_choice(rule: str, language: Optional[str], records: str = RECORDS) -> Optional[str]:
    """The candidate a past rule chose, as its records name it (its dev choice, else its test's)."""
    choice, test = read_json("choices.json", records).get(rule), read_json("tests.json", records).get(rule)
    for record in (choice, test):
        if record and language:
            record = record.get(language)
        if record and isinstance(record.get("chosen"), dict) and "name" in record["chosen"]:
            return record["chosen"]["name"]
        if record and isinstance(record.get("chosen"), str):           # rules v5 and v6
            return record["chosen"]
        if record and "candidate" in record:
            return record["candidate"]
    return None


def replay(records: str = RECORDS) -> List[Dict[str, Any]]:
    """For every (rule, language) of trials.tsv whose choice is recorded: the candidate its choice
    function gives from the recorded dev scores, beside the recorded one."""
    groups: Dict[tuple, List[Dict[str, str]]] = {}
    for row in trials(records):
        groups.setdefault((row["rule"], row["language"] or None), []).append(row)
    out = []
    for (rule, language), rows in groups.items():
        recorded = recorded_choice(rule, language, records)
        if recorded is None:
            continue
        rows.sort(key=lambda r: int(r["order"]))
        chosen = rows[choice_rule("best_dev")([float(r[DEV_COLUMN]) for r in rows])]["candidate"]
        out.append({"rule": rule, "language": language, "candidates": len(rows), "replayed": chosen,
                    "recorded": recorded, "same": chosen == recorded})
    return out


# -- runs and candidates ---------------------------------------------------------------------------
def run_folders(rule: Dict[str, Any], seeds: Optional[Sequence[int]] = None) -> Dict[int, str]:
    """Seed -> run folder (relative to the repository root) of the rule's runs."""
    return {seed: rule["runs"].format(seed=seed) for seed in (seeds or rule["seeds"])}


def epochs_of(folder: str) -> List[int]:
    """The epochs a run kept (``epoch-NNN.pt``), in order."""
    return sorted(int(EPOCH.search(p).group(1)) for p in glob.glob(os.path.join(folder, "epoch-*.pt")))


def epoch_records(folder: str) -> Dict[int, Dict[str, Any]]:
    """Each logged epoch's record of a run's ``metrics.jsonl`` (the last one of an epoch logged twice)."""
    path = os.path.join(folder, "metrics.jsonl")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as handle:
        events = [json.loads(line) for line in handle if line.strip()]
    return {e["epoch"]: e for e in events if e.get("event") == "epoch"}


def train(name: str, rule: Dict[str, Any], seeds: Optional[Sequence[int]] = None, side_by_side: int = 2) -> None:
    """Train the rule's runs, ``side_by_side`` at a time, each resumed where it stopped."""
    if rule.get("teacher"):
        prepare_students(rule)
    folders = list(run_folders(rule, seeds).items())
    for start in range(0, len(folders), side_by_side):
        procs = []
        for seed, folder in folders[start:start + side_by_side]:
            os.makedirs(os.path.join(ROOT, folder), exist_ok=True)
            command = shlex.split(rule["command"].format(seed=seed, run=folder))
            if not os.path.exists(os.path.join(ROOT, folder, "last.pt")):
                argv = command
            elif rule.get("resume") == "append":      # the rule's own command continues its run
                argv = command + ["--resume"]
            else:
                argv = ["onparse", "train", "--out", folder, "--resume", "--threads", "1"]
            log = open(os.path.join(ROOT, folder, "train.log"), "a", encoding="utf-8")
            print(f"{name}: {' '.join(argv)}", file=sys.stderr)
            procs.append(subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=log))
        if any(p.wait() for p in procs):
            sys.exit(f"{name}: a run failed (see its train.log)")


def gold_table(rule: Dict[str, Any], part: str, cache: Optional[str] = None):
    """``(gold, table)``: the rule's gold part (``dev`` or ``test``) and one tree table over its
    sentences, which every model file scored on it is read into (cached in ``cache``, a JSON-lines
    file, when given)."""
    from onparse import load_gold, selection

    gold = load_gold(f"{rule['gold']}-{part}")
    return gold, selection.TreeTable([list(s.words) for s in gold], cache)


def readings(rule: Dict[str, Any]) -> Callable[[Any], Any]:
    """How the rule's members read a model file: its ``layers`` (a language model's; absent: none
    to choose) x its ``decoders``."""
    return lambda parser: parser.with_grid(rule.get("layers"), list(rule["decoders"]))


def epoch_file(run: str, epoch: int) -> str:
    return os.path.join(ROOT, run, f"epoch-{epoch:03d}.pt")


def score_epoch(path: str, rule: Dict[str, Any], gold, table) -> Dict[str, Dict[str, float]]:
    """Member label -> dev F1 (all / <= 10 words) of every member of the model file ``path``, its
    trees read into ``table`` (:func:`gold_table`)."""
    from onparse import selection

    return {member.label(): selection.gold_f1(trees, gold) for member, trees in table.read(path, readings(rule))}


def candidates(name: str, rule: Dict[str, Any], records: str = RECORDS) -> List[Dict[str, Any]]:
    """The rule's candidates in order (seed, epoch, member), each with its dev F1, from
    ``dev.jsonl``: the epochs scored so far."""
    scored = [r for r in read_jsonl("dev.jsonl", records) if r.get("source") == name]
    return sorted(({"run": r["run"], "seed": r["seed"], "epoch": r["epoch"], "member": member, "dev": f1}
                   for r in scored for member, f1 in r["dev"].items()),
                  key=lambda c: (c["seed"], c["epoch"], c["member"]))


def dev(name: str, rule: Dict[str, Any], records: str = RECORDS) -> Dict[str, Any]:
    """Score every kept epoch not yet scored on the rule's dev part, then apply its choice and
    record it (``choices.json``); with ``seed_records``, one line per seed at its epoch of lowest
    validation perplexity (no gold), with the run's collapse figures."""
    done = {(r["run"], r["epoch"]) for r in read_jsonl("dev.jsonl", records) if r.get("source") == name}
    gold = table = None
    for seed, folder in run_folders(rule).items():
        logged = epoch_records(os.path.join(ROOT, folder))
        for epoch in epochs_of(os.path.join(ROOT, folder)):
            if (folder, epoch) in done:
                continue
            if gold is None:
                gold, table = gold_table(rule, "dev")
            began = time.monotonic()
            scores = score_epoch(epoch_file(folder, epoch), rule, gold, table)
            append_jsonl("dev.jsonl", {"source": name, "run": folder, "seed": seed, "epoch": epoch,
                                       "valid_ppl": logged.get(epoch, {}).get("valid_ppl"), "dev": scores}, records)
            best = max(v["all"] for v in scores.values())
            print(f"{name}: {folder} epoch {epoch}: dev {100 * best:.1f} ({time.monotonic() - began:.0f} s)",
                  file=sys.stderr)
    found = candidates(name, rule, records)
    if not found:
        sys.exit(f"{name}: no kept epoch to score yet")
    if rule.get("teacher") and not rule.get("students_only"):
        found = teacher_candidates(rule, records) + found
    index = choice_rule(rule["choice"])([c["dev"]["all"] for c in found])
    chosen = {**found[index], "name": found[index].get("name") or label(found[index])}
    if "least_dev" in rule:                       # a choice below the rule's floor ships nothing
        chosen["qualifies"] = chosen["dev"]["all"] >= rule["least_dev"]
    choices = read_json("choices.json", records)
    choices[name] = {"rule": f"{name} (research/PROTOCOL.md {rule['protocol']})", "candidates": len(found),
                     "chosen": chosen}
    write_json("choices.json", choices, records)
    if rule.get("seed_records"):
        write_seed_records(name, rule, found, records)
    return choices[name]


def teacher_candidates(rule: Dict[str, Any], records: str = RECORDS) -> List[Dict[str, Any]]:
    """A students rule's first candidates, by their teacher rule's dev records: its incumbent (its
    first trials row) and its choice, the teacher."""
    teacher = rule["teacher"]
    first = next(r for r in trials(records) if r["rule"] == teacher and r["order"] == "1")
    chosen = read_json("choices.json", records)[teacher]["chosen"]
    return [{"name": f"incumbent: {first['candidate']}", "incumbent": True,
             "dev": {"all": float(first[DEV_COLUMN]) / 100, "10": float(first["dev <=10 sent F1"]) / 100}},
            {"name": f"teacher: {chosen['name']}", "teacher": teacher, "dev": chosen["dev"]}]


def label(candidate: Dict[str, Any]) -> str:
    return f"s{candidate['seed']} e{candidate['epoch']} {candidate['member']}"


def write_seed_records(name: str, rule: Dict[str, Any], found: List[Dict[str, Any]], records: str) -> None:
    """``research/<seed_records>``: the rule's lines replaced by one per seed at its epoch of lowest
    validation perplexity (the no-gold choice), with its dev F1 and the run's collapse figures."""
    path = os.path.join(HERE, rule["seed_records"])
    kept = [r for r in (read_jsonl(rule["seed_records"], HERE) if os.path.exists(path) else []) if r.get("rule") != name]
    for seed, folder in run_folders(rule).items():
        logged = epoch_records(os.path.join(ROOT, folder))
        mine = {c["epoch"]: c for c in found if c["seed"] == seed}
        usable = {e: logged[e]["valid_ppl"] for e in logged
                  if e in mine and isinstance(logged[e].get("valid_ppl"), (int, float))}
        if not usable:
            continue
        from onparse import selection      # fit's own rule: the epoch of lowest validation perplexity

        epoch = selection.lowest_perplexity({folder: usable}, {folder: usable})[folder]
        record = logged[epoch]
        kept.append({"rule": name, "seed": seed, "recipe": rule["recipe"], "epoch": epoch, "epochs": max(logged),
                     "valid_ppl": record["valid_ppl"], "unigram_ppl": record.get("unigram_ppl"),
                     "dev_f1": mine[epoch]["dev"]["all"], "dev_f1_10": mine[epoch]["dev"]["10"],
                     "branching_share": record.get("branching_share"),
                     "right_branching_share": record.get("right_branching_share"),
                     "rule_entropy": record.get("rule_entropy"), "clipped_share": record.get("clipped_share"),
                     "best_dev_f1": max(c["dev"]["all"] for c in mine.values())})
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in kept)


# -- averages of several files (rules of kind "average") and their students -----------------------
def git_bytes(spec: str) -> bytes:
    """The bytes of ``COMMIT:PATH`` in this repository's history."""
    done = subprocess.run(["git", "show", spec], cwd=ROOT, capture_output=True)
    if done.returncode != 0:
        sys.exit(f"{spec} is not in this checkout's history (a full clone has it)")
    return done.stdout


def part_path(name: str, key: str, spec: str) -> str:
    """The model file of a named pool part: a ``git:COMMIT:PATH`` written once to
    ``runs/<rule>/<key>.pt``, or a path in the repository."""
    if not spec.startswith("git:"):
        return os.path.join(ROOT, spec)
    folder = os.path.join(ROOT, "runs", name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{key}.pt")
    if not os.path.exists(path):
        with open(path + ".tmp", "wb") as handle:
            handle.write(git_bytes(spec[len("git:"):]))
        os.replace(path + ".tmp", path)
    return path


def ranked_grammars(rule: Dict[str, Any], records: str = RECORDS) -> List[Dict[str, Any]]:
    """The pool's grammars: each seed of the rule ``grammars.rule`` names at its epoch of lowest
    validation perplexity (its seed records: no gold), with its dev choice if ``with_choice``;
    ranked by recorded dev F1 (all lengths), ties to the lower seed, then the earlier epoch."""
    spec = rule["grammars"]
    source = rules()[spec["rule"]]
    scored = {(c["seed"], c["epoch"]): c for c in candidates(spec["rule"], source, records)}
    picks = {(r["seed"], r["epoch"]) for r in read_jsonl(source["seed_records"], HERE) if r.get("rule") == spec["rule"]}
    if spec.get("with_choice"):
        chosen = read_json("choices.json", records)[spec["rule"]]["chosen"]
        picks.add((chosen["seed"], chosen["epoch"]))
    return sorted((scored[p] for p in picks), key=lambda c: (-c["dev"]["all"], c["seed"], c["epoch"]))


def average_candidates(rule: Dict[str, Any], ranked: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The rule's candidates in order: its incumbent (parts alone), then for each group of parts,
    each K, each voter set and tie rule, the group with the K best-ranked grammars of K different
    seeds.  A candidate: ``name``, ``parts`` (keys of ``rule["parts"]``), ``grammars`` (entries of
    ``ranked``), ``voters``, ``ties``."""
    out = [{"name": " + ".join(rule["incumbent"]), "parts": list(rule["incumbent"]), "grammars": [],
            "voters": [], "ties": "first"}]
    for group in rule["groups"]:
        for k in rule["grammars"]["k"]:
            chosen: List[Dict[str, Any]] = []
            for grammar in ranked:
                if len(chosen) < k and grammar["seed"] not in {g["seed"] for g in chosen}:
                    chosen.append(grammar)
            if len(chosen) < k:
                continue
            for voters in rule["voters"]:
                for ties in rule["ties"]:
                    names = list(group) + [f"grammar {label(g)}" for g in chosen] + [f"{v} voter" for v in voters]
                    out.append({"name": f"{' + '.join(names)}, ties {ties}", "parts": list(group), "grammars": chosen,
                                "voters": list(voters), "ties": ties})
    return out


def candidate_files(name: str, rule: Dict[str, Any], candidate: Dict[str, Any]) -> List[str]:
    """The model files a candidate averages, in member order: its parts, then its grammars."""
    return ([part_path(name, key, rule["parts"][key]) for key in candidate["parts"]]
            + [epoch_file(g["run"], g["epoch"]) for g in candidate["grammars"]])


class Averages:
    """The averages of an average rule's candidates over one tree table: each model file the
    candidates name is loaded and read once (its members' trees), and one loaded parser (the
    incumbent's first part) averages them with each candidate's voters and tie rule."""

    def __init__(self, name: str, rule: Dict[str, Any], table):
        from onparse import load

        self.name, self.rule, self.table, self.columns = name, rule, table, {}
        self.parser = load(part_path(name, rule["incumbent"][0], rule["parts"][rule["incumbent"][0]]), "cpu")

    def members(self, candidate: Dict[str, Any]) -> List[List[Any]]:
        """Each member's trees of the table's sentences, in member order: the candidate's files,
        each read by its own members."""
        out = []
        for path in candidate_files(self.name, self.rule, candidate):
            if path not in self.columns:
                self.columns[path] = [trees for _, trees in self.table.read(path)]
            out += self.columns[path]
        return out

    def trees(self, candidate: Dict[str, Any]) -> List[Any]:
        """The candidate's tree of each of the table's sentences (None for an empty one): the
        average of its members' trees with its voters and tie rule."""
        columns, sentences = self.members(candidate), self.table.sentences
        parser = self.parser.with_members(self.parser.members, candidate["voters"], candidate["ties"])
        full = [i for i, tokens in enumerate(sentences) if tokens]
        out: List[Any] = [None] * len(sentences)
        for i, tree in zip(full, parser.average([[column[i] for column in columns] for i in full],
                                                [sentences[i] for i in full])):
            out[i] = tree
        return out


def tree_cache(name: str, part: str) -> str:
    """Where an average rule's tree table of its gold ``part`` is cached: ``runs/<rule>/``."""
    os.makedirs(os.path.join(ROOT, "runs", name), exist_ok=True)
    return os.path.join(ROOT, "runs", name, f"trees-{part}.jsonl")


def average_dev(name: str, rule: Dict[str, Any], records: str = RECORDS) -> Dict[str, Any]:
    """Score every candidate of an average rule on its dev part, one ``trials.tsv`` row each (sentence
    F1 in percent, four decimals: the choice is made from the recorded figures, so it replays),
    then record its choice."""
    from onparse import selection

    if any(r["rule"] == name for r in trials(records)):
        sys.exit(f"{name}: its candidates are recorded already (records/trials.tsv)")
    gold, table = gold_table(rule, "dev", tree_cache(name, "dev"))
    averages = Averages(name, rule, table)
    found = average_candidates(rule, ranked_grammars(rule, records))
    rows = []
    for order, candidate in enumerate(found, 1):
        f1 = selection.gold_f1(averages.trees(candidate), gold)
        candidate["dev"] = {k: round(v, 6) for k, v in f1.items()}
        rows.append({"rule": name, "language": "", "order": order, "candidate": candidate["name"],
                     "trees": len(averages.members(candidate)) + len(candidate["voters"]),
                     DEV_COLUMN: f"{100 * f1['all']:.4f}", "dev <=10 sent F1": f"{100 * f1['10']:.4f}"})
        print(f"{name}: {order}/{len(found)} {candidate['name']}: dev {rows[-1][DEV_COLUMN]}", file=sys.stderr)
    with open(os.path.join(records, "trials.tsv"), encoding="utf-8") as handle:
        header = handle.readline().rstrip("\n").split("\t")
    with open(os.path.join(records, "trials.tsv"), "a", encoding="utf-8") as handle:
        handle.writelines("\t".join(str(row.get(column, "")) for column in header) + "\n" for row in rows)
    index = choice_rule(rule["choice"])([float(r[DEV_COLUMN]) for r in rows])
    chosen = {**found[index], "grammars": [{k: g[k] for k in ("run", "seed", "epoch")} for g in found[index]["grammars"]]}
    choices = read_json("choices.json", records)
    choices[name] = {"rule": f"{name} (research/PROTOCOL.md {rule['protocol']})", "candidates": len(found),
                     "chosen": chosen}
    write_json("choices.json", choices, records)
    return choices[name]


def ship_average(name: str, rule: Dict[str, Any], out: str, records: str = RECORDS) -> None:
    """Write an average rule's choice as one bundle file (float32: the trees it scored on dev)."""
    from onparse import load

    chosen = read_json("choices.json", records)[name]["chosen"]
    parser = load(candidate_files(name, rule, chosen), "cpu")
    parser.with_members(parser.members, chosen["voters"], chosen["ties"]).save_bundle(out, weights="float32")


def prepare_students(rule: Dict[str, Any], records: str = RECORDS) -> None:
    """What a students rule's command reads, in its teacher's folder ``runs/<teacher>/``: the text
    (``<text>-train.txt``: the corpus's training split, one sentence per line), the teacher
    (``teacher.pt``) and its trees of the text (``teacher-trees.txt``, two ``induce --shard``
    halves side by side); each made once."""
    from onparse import corpus_spec, load_corpus

    teacher = rule["teacher"]
    folder = os.path.join(ROOT, rule.get("folder", os.path.join("runs", teacher)))
    os.makedirs(folder, exist_ok=True)
    text = os.path.join(folder, f"{rule['text']}-train.txt")
    if not os.path.exists(text):
        with open(text + ".tmp", "w", encoding="utf-8") as handle:
            handle.writelines(" ".join(s) + "\n" for s in load_corpus(corpus_spec(rule["text"])).train)
        os.replace(text + ".tmp", text)
    bundle = os.path.join(folder, "teacher.pt")
    if not os.path.exists(bundle) and rule.get("teacher_source"):   # a recorded part, checked by its digest
        data = source_bytes(rule["teacher_source"])
        with open(bundle + ".tmp", "wb") as handle:
            handle.write(data)
        os.replace(bundle + ".tmp", bundle)
    if not os.path.exists(bundle):
        ship_average(teacher, rules()[teacher], bundle, records)
    trees = os.path.join(folder, "teacher-trees.txt")
    if not os.path.exists(trees):
        parts = [f"{trees}.part{k}" for k in (1, 2)]
        outputs = [open(part, "w", encoding="utf-8") for part in parts]
        procs = [subprocess.Popen(["onparse", "induce", text, "--pretokenized", "-m", bundle, "-q", "--threads", "1",
                                   "--shard", f"{k}/2"], cwd=ROOT, stdout=output)
                 for k, output in enumerate(outputs, 1)]
        failed = [p.wait() for p in procs]
        for output in outputs:
            output.close()
        if any(failed):
            sys.exit(f"{teacher}: the teacher's trees failed")
        with open(trees + ".tmp", "w", encoding="utf-8") as handle:
            for part in parts:
                with open(part, encoding="utf-8") as piece:
                    handle.write(piece.read())
        os.replace(trees + ".tmp", trees)


def test(name: str, rule: Dict[str, Any], records: str = RECORDS) -> Dict[str, Any]:
    """Score the rule's recorded choice on its test part beside right-branching, once."""
    tests = read_json("tests.json", records)
    if name in tests:
        sys.exit(f"{name}: its test part was scored already ({RECORDS}/tests.json); a rule scores test once")
    choice = read_json("choices.json", records).get(name)
    if not choice:
        sys.exit(f"{name}: no dev choice recorded yet (python research/lab.py dev {name})")
    from onparse import baseline_trees, selection

    chosen = choice["chosen"]
    if chosen.get("qualifies") is False:
        sys.exit(f"{name}: its choice is below the rule's least_dev ({rule['least_dev']}): nothing to test")
    if chosen.get("incumbent"):
        sys.exit(f"{name}: its choice is the incumbent, whose test figures stand (not scored again)")
    if chosen.get("teacher"):                     # the teacher rule's own test scored it once
        tested = read_json("tests.json", records).get(chosen["teacher"])
        if not tested:
            sys.exit(f"{name}: its choice is the teacher: python research/lab.py test {chosen['teacher']}")
        tests[name] = {**tested, "rule": choice["rule"]}
        write_json("tests.json", tests, records)
        return tests[name]
    if rule.get("kind") == "average":
        gold, table = gold_table(rule, "test", tree_cache(name, "test"))
        trees = Averages(name, rule, table).trees(chosen)
    else:
        gold, table = gold_table(rule, "test")
        columns = table.read(epoch_file(chosen["run"], chosen["epoch"]), readings(rule))
        trees = next(trees for member, trees in columns if member.label() == chosen["member"])
    tokens = table.sentences
    tests[name] = {"rule": choice["rule"], "candidate": chosen["name"],
                   "sentences": [len(gold), sum(len(s.tokens) <= 10 for s in gold)],
                   "chosen": selection.gold_f1(trees, gold),
                   **{kind: selection.gold_f1(baseline_trees(tokens, kind), gold) for kind in ("right", "left")}}
    write_json("tests.json", tests, records)
    return tests[name]


def readme(name: str, records: str = RECORDS) -> str:
    """The rule's table: its choice on dev and (once scored) test, beside right-branching."""
    choice, tested = read_json("choices.json", records).get(name), read_json("tests.json", records).get(name)
    if not choice:
        sys.exit(f"{name}: nothing recorded yet")

    def cell(f1):
        return f"{100 * f1['all']:.1f} / {100 * f1['10']:.1f}" if f1 else "-"

    lines = ["| trees | dev (all / <= 10 words) | test (all / <= 10 words) |", "|---|---|---|",
             f"| {choice['chosen']['name']} | {cell(choice['chosen']['dev'])} | {cell((tested or {}).get('chosen'))} |"]
    if tested:
        lines.append(f"| right-branching | - | {cell(tested['right'])} |")
    return "\n".join(lines)


def ship(name: str, rule: Dict[str, Any], out: str, records: str = RECORDS) -> None:
    """Write the rule's chosen (run, epoch, member) as a one-member model file."""
    from onparse import load

    chosen = read_json("choices.json", records)[name]["chosen"]
    parser = readings(rule)(load(epoch_file(chosen["run"], chosen["epoch"]), "cpu"))
    parser.with_members([m for m in parser.members if m.label() == chosen["member"]]).save_bundle(out)


def shipped(known: Dict[str, Dict[str, Any]]) -> List[str]:
    """Check every shipped file against the SHA-256 its rule records; the lines to print.  Exit 1
    when one differs: a shipped model changes only through a rule."""
    lines, bad = [], False
    for name, rule in known.items():
        if "ships" not in rule:
            continue
        with open(os.path.join(ROOT, rule["ships"]), "rb") as handle:
            digest = sha256_of(handle.read())
        bad |= digest != rule["sha256"]
        lines.append(f"{rule['ships']}: rule {name} ({rule['title']}), PROTOCOL.md {rule['protocol']}: "
                     + ("the recorded file" if digest == rule["sha256"] else f"DIFFERS (sha256 {digest})"))
        for weights, recorded in rule.get("weights", {}).items():
            lines.append(f"  research weights {weights} (sha256 {recorded[:12]}...): git show 63bf62d:research/models/{weights} > {weights}")
    if bad:
        sys.exit("\n".join(lines))
    return lines


def sha256_of(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def source_bytes(source: Dict[str, Any]) -> bytes:
    """The bytes of one recorded part of a shipped file: ``git`` (``COMMIT:PATH`` in this
    repository's history) or ``file`` (a run's epoch file, with the command that ``rebuild``s
    it), checked against its recorded ``sha256``."""
    if "git" in source:
        data, where = git_bytes(source["git"]), source["git"]
    else:
        where = os.path.join(ROOT, source["file"])
        if not os.path.exists(where):
            sys.exit(f"model: {source['file']} is missing; rebuild it with: {source['rebuild']}")
        with open(where, "rb") as handle:
            data = handle.read()
    if sha256_of(data) != source["sha256"]:
        sys.exit(f"model: {where} is not the recorded part (sha256 {sha256_of(data)})")
    return data


def model(known: Dict[str, Dict[str, Any]], out: Optional[str] = None, records: str = RECORDS) -> str:
    """Rebuild the shipped file from the parts its rule records (``build``: a JSON record of its
    ``sources``, read in order as one parser's models; the members, voters and ties, or named
    ``readings`` of them (name -> ``{members, voters, ties}``) and the ``default_reading``; the
    models carried, each model's precision and the metadata) into ``out`` (default
    ``runs/model/``, never the shipped path); the line to print.  Exit 1 when the rebuilt file is
    not the shipped one byte for byte."""
    from onparse import load

    name, rule = next((n, r) for n, r in known.items() if "ships" in r)
    recipe = read_json(rule["build"], records)
    folder = os.path.join(ROOT, "runs", "model")
    os.makedirs(folder, exist_ok=True)
    out = out or os.path.join(folder, os.path.basename(rule["ships"]))
    if os.path.realpath(out) == os.path.realpath(os.path.join(ROOT, rule["ships"])):
        sys.exit(f"model: {rule['ships']} is the shipped file; rebuild beside it, never over it")
    paths = []
    for k, source in enumerate(recipe["sources"]):
        paths.append(os.path.join(folder, f"source-{k + 1}.pt"))
        with open(paths[-1], "wb") as handle:
            handle.write(source_bytes(source))
    parser = load(paths, "cpu")

    def reading(spec: Dict[str, Any]):                 # members (by the sources' models), voters, ties
        members = [parser.models[m["model"]].member(m["model"], m["layer"], m["decoder"]) for m in spec["members"]]
        return parser.with_members(members, spec["voters"], spec["ties"])

    readings = {n: reading(spec) for n, spec in recipe["readings"].items()} if "readings" in recipe else None
    shipped = parser if readings else reading(recipe)
    shipped.save_bundle(out, weights=recipe["weights"], metadata=recipe["metadata"], carry=recipe["carry"],
                        weights_of={int(k): v for k, v in recipe.get("weights_of", {}).items()},
                        readings=readings, default_reading=recipe.get("default_reading"))
    with open(out, "rb") as handle:
        digest = sha256_of(handle.read())
    parts = ", ".join(s.get("git") or s["file"] for s in recipe["sources"])
    line = f"{out}: rule {name}'s shipped file rebuilt from {parts}"
    if digest != rule["sha256"]:
        sys.exit(f"{line}: DIFFERS from {rule['ships']} (sha256 {digest})")
    return f"{line}: {rule['ships']} byte for byte (sha256 {digest[:12]}...)"


def main(argv: Optional[Sequence[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("verb", choices=("list", "train", "dev", "test", "readme", "ship", "replay", "shipped", "model"))
    ap.add_argument("rule", nargs="?")
    ap.add_argument("out", nargs="?", help="ship: the file to write")
    ap.add_argument("--seeds", default=None, help="train: a comma-separated subset of the rule's seeds")
    args = ap.parse_args(argv)
    known = rules()
    if args.verb == "replay":
        rows = replay()
        for r in rows:
            print(f"{r['rule']}\t{r['language'] or '-'}\t{r['candidates']}\t{'same' if r['same'] else 'DIFFERS'}\t"
                  f"{r['replayed']}")
        sys.exit(0 if all(r["same"] for r in rows) else 1)
    if args.verb == "shipped":
        print("\n".join(shipped(known)))
        return
    if args.verb == "model":
        print(model(known, args.rule))           # its one argument: where to write
        return
    if args.verb == "list":
        choices, tests = read_json("choices.json"), read_json("tests.json")
        fits = {r["source"] for r in read_jsonl("fits.jsonl")}
        for name, rule in known.items():
            state = "tested" if name in tests or f"fit-{name}" in fits else "chosen on dev" if name in choices \
                else "open"
            print(f"{name}\t{state}\t{rule['title']}")
        return
    if args.rule not in known:
        ap.error(f"unknown rule {args.rule!r}; see research/rules.toml")
    rule = known[args.rule]
    if args.verb == "train":
        train(args.rule, rule, [int(s) for s in args.seeds.split(",")] if args.seeds else None)
    elif args.verb == "dev":
        print(json.dumps((average_dev if rule.get("kind") == "average" else dev)(args.rule, rule)["chosen"]))
    elif args.verb == "test":
        print(json.dumps(test(args.rule, rule)))
    elif args.verb == "readme":
        print(readme(args.rule))
    elif args.verb == "ship":
        if not args.out:
            ap.error("ship needs the file to write")
        (ship_average if rule.get("kind") == "average" else ship)(args.rule, rule, args.out)


if __name__ == "__main__":
    main()
