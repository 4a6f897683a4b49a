"""Parsing speed of a student (``onparse distill``) against the ensemble it replaces, side by side.

Both contenders run the public ``Parser`` over the same token lists, in this process:

* ensemble: the teacher (default: the three language models the bundled student learnt from, as
  the bundle committed at ``ENSEMBLE_SOURCE`` holds them, their recorded members averaged with a
  right-branching voter, O(n^3) per sentence for the average; the shipped file keeps only one of
  them, for distances);
* student: one BiLSTM span scorer and CYK (O(n^3) per sentence too, batched over sentences).

Rounds alternate A B A B; the medians are compared and the ratio printed.  Sentences: the sample's
dev half (``wsj-sample-dev``, all lengths) by default, or the lines of ``--text``.

``--end-to-end`` times what a user times instead (issue 41.18): ``onparse induce FILE [-m MODEL]
> /dev/null`` as a new process for each contender, start-up included (importing torch, reading
the model), on ``--lines`` lines of raw news text (conll2000's WSJ test sentences, detokenised:
the words and punctuation a user's file holds), beside the start-up alone (the same command on
an empty file) and the in-process figure on the same lines.

Without rule v8's student (``runs/`` is not in the repository), the benchmark builds a student of
the default sizes over the teacher's vocabulary, untrained: its parsing speed is that of a
trained one (the cost depends on the sizes and the sentences, not on the weights).

    python benchmarks/bench_distill.py --rounds 3           # rule v8's student against the language models' average
    python benchmarks/bench_distill.py --student s.pt --teacher bundle.pt --text lines.txt --limit 2000
    python benchmarks/bench_distill.py --end-to-end --threads 1 --rounds 3   # what `onparse induce` costs
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


#: The bundle (in this repository's history) that holds the three language models of the average
#: the bundled student was distilled from, and its recorded members of them.
ENSEMBLE_SOURCE = "63bf62d:src/onparse/models/default.pt"


def teacher_file(path, folder):
    """``path``, or (None) the default ensemble written into ``folder``: the three language models
    of :data:`ENSEMBLE_SOURCE` read by their recorded members, with a right-branching voter."""
    if path:
        return path
    from onparse import load

    source = os.path.join(folder, "source.pt")
    done = subprocess.run(["git", "show", ENSEMBLE_SOURCE], cwd=ROOT, capture_output=True)
    if done.returncode != 0:
        sys.exit(f"the default ensemble comes from {ENSEMBLE_SOURCE} (git history): give --teacher FILE instead")
    Path(source).write_bytes(done.stdout)
    parser = load(source, "cpu")
    members = [parser.models[m["model"]].member(m["model"], m["layer"], m["decoder"])
               for m in parser.metadata["dev"]["lm_only_members"]]
    out = os.path.join(folder, "ensemble.pt")
    parser.with_members(members, ["right"], "right").save_bundle(out)
    return out


def sentences(args):
    if args.text:
        with open(args.text, encoding="utf-8") as handle:
            return [line.split() for line in handle if line.split()][:args.limit]
    from onparse import load_gold

    return [list(s.words) for s in load_gold("wsj-sample-dev")][:args.limit]


def timed(parser, tokens):
    started = time.perf_counter()
    trees = parser.trees(tokens)
    return time.perf_counter() - started, trees


def news_lines(n):
    """``n`` lines of raw news text: conll2000's WSJ test sentences, detokenised (NLTK_DATA)."""
    from nltk.corpus import conll2000
    from nltk.tokenize.treebank import TreebankWordDetokenizer

    detokenize = TreebankWordDetokenizer().detokenize
    sents = conll2000.sents("test.txt") + conll2000.sents("train.txt")
    return [detokenize(words) for words in sents[:n]]


def student_or_stand_in(path, teacher, folder):
    """``path`` when it exists, else an untrained student of the default sizes over the teacher's
    vocabulary written in ``folder`` (as fast as a trained one: speed does not depend on weights)."""
    if os.path.isfile(path):
        return path, path
    from onparse.student.file import save_student
    from onparse.student.model import SpanStudent, StudentConfig

    torch.manual_seed(0)
    config = StudentConfig(vocab_size=len(teacher.vocab))
    stand_in = os.path.join(folder, "student.pt")
    save_student(stand_in, config=config.to_dict(), vocab=teacher.vocab, state_dict=SpanStudent(config).state_dict())
    return stand_in, f"an untrained student of the default sizes ({path} not found)"


def run_induce(file, model, threads, device):
    """Seconds of ``onparse induce FILE [-m MODEL] -q > /dev/null`` in a new process."""
    command = [shutil.which("onparse") or sys.executable] + ([] if shutil.which("onparse") else ["-m", "onparse"])
    command += ["induce", file, "-q", "--device", device] + ([] if model is None else ["-m", model])
    env = dict(os.environ, **({"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)} if threads else {}))
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    seconds = time.perf_counter() - started
    if done.returncode:
        sys.exit(f"error: {' '.join(command)} failed: {done.stderr.strip()[-500:]}")
    return seconds


def end_to_end(args):
    """The same lines three ways per contender: a new ``onparse induce`` process (start-up
    included), its start-up alone (an empty file), and ``Parser.trees`` in this process."""
    from onparse import load

    lines = news_lines(args.lines)
    with tempfile.TemporaryDirectory() as folder:
        args.teacher = teacher_file(args.teacher, folder)
        ensemble = load(args.teacher, args.device)
        student_path, student_name = student_or_stand_in(args.student, ensemble, folder)
        student = load(student_path, args.device)
        text, empty = os.path.join(folder, "news.txt"), os.path.join(folder, "empty.txt")
        Path(text).write_text("\n".join(lines) + "\n", encoding="utf-8")
        Path(empty).write_text("", encoding="utf-8")
        tokens = ensemble.tokens(lines)
        print(f"{len(lines):,} lines of raw news text ({sum(map(len, tokens)):,} words as the models read them); "
              f"{torch.get_num_threads()} threads; ensemble: {args.teacher or 'the bundled model'}; student: "
              f"{student_name}", file=sys.stderr)
        contenders = {"ensemble": (ensemble, args.teacher), "student": (student, student_path)}
        timed(ensemble, tokens[:64]), timed(student, tokens[:64])          # warm-up
        times = {(name, part): [] for name in contenders for part in ("process", "start-up", "in-process")}
        for r in range(args.rounds):
            for name, (parser, model) in contenders.items():
                times[name, "process"].append(run_induce(text, model, args.threads, args.device))
                times[name, "start-up"].append(run_induce(empty, model, args.threads, args.device))
                times[name, "in-process"].append(timed(parser, tokens)[0])
                print(f"round {r + 1} {name}: " + ", ".join(f"{part} {times[name, part][-1]:.2f} s"
                                                           for part in ("process", "start-up", "in-process")),
                      file=sys.stderr)
    med = {key: statistics.median(t) for key, t in times.items()}
    rate = {key: len(lines) / t for key, t in med.items()}
    print(f"medians of {args.rounds} round(s), {len(lines):,} lines | onparse induce FILE, start-up included | "
          "start-up alone | in process (Parser.trees)")
    for name in contenders:
        print(f"{name:8} | {med[name, 'process']:7.2f} s = {rate[name, 'process']:8,.1f} sent/s | "
              f"{med[name, 'start-up']:5.2f} s | {med[name, 'in-process']:7.2f} s = "
              f"{rate[name, 'in-process']:8,.1f} sent/s")
    print(f"student / ensemble: {rate['student', 'process'] / rate['ensemble', 'process']:.2f}x end to end, "
          f"{rate['student', 'in-process'] / rate['ensemble', 'in-process']:.2f}x in process")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--student", default=str(ROOT / "runs" / "distill" / "run-s2" / "epoch-002.pt"),
                    help="default: rule v8's choice (research/PROTOCOL.md)")
    ap.add_argument("--teacher", default=None, help="the ensemble (default: the language models the bundled "
                                                    "student learnt from, with a right-branching voter)")
    ap.add_argument("--text", default=None, help="one pretokenized sentence per line")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--end-to-end", action="store_true",
                    help="time `onparse induce FILE > /dev/null` processes on raw news text instead")
    ap.add_argument("--lines", type=int, default=2000, help="lines of raw text for --end-to-end")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.end_to_end:
        return end_to_end(args)
    from onparse import load

    tokens = sentences(args)
    with tempfile.TemporaryDirectory() as folder:
        ensemble = load(teacher_file(args.teacher, folder), args.device)
        student_path, student_name = student_or_stand_in(args.student, ensemble, folder)
        student = load(student_path, args.device)
    words = sum(map(len, tokens))
    print(f"{len(tokens):,} sentences, {words:,} words; {torch.get_num_threads()} threads on {args.device}; "
          f"ensemble: {ensemble.describe_average()} of {len(ensemble.models)} models; student: {student_name}",
          file=sys.stderr)
    timed(ensemble, tokens[:64])                       # warm-up
    timed(student, tokens[:64])
    times = {"ensemble": [], "student": []}
    for r in range(args.rounds):
        for name, parser in (("ensemble", ensemble), ("student", student)):
            seconds, trees = timed(parser, tokens)
            assert len(trees) == len(tokens)
            times[name].append(seconds)
            print(f"round {r + 1} {name}: {seconds:.2f} s ({len(tokens) / seconds:,.0f} sent/s)", file=sys.stderr)
    rate = {name: len(tokens) / statistics.median(t) for name, t in times.items()}
    print(f"ensemble {rate['ensemble']:,.1f} sent/s | student {rate['student']:,.1f} sent/s | "
          f"ratio {rate['student'] / rate['ensemble']:.2f}x")


if __name__ == "__main__":
    main()
