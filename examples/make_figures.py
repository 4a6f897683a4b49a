"""Generate the README pictures into examples/figures/ (``make figures``).

By default the bundled model is drawn, with the training log of its run
(``examples/default-model-metrics.jsonl``: the log of the run of the bundle's first model).
``--tiny`` (or an installation without a bundled model) trains a tiny language model first
(``onparse train --preset tiny`` on a few hundred sentences of the NLTK treebank sample, capped
by ``--max-time``), which also gives a real training log, in under a minute.  Pass
``--model runs/x/best.pt --log runs/x`` to draw any other model.

Writes (PNG, small):
    show.png            onparse show --gold wsj10-sample-test:3 -o show.png   (tree, d_f per layer, gold tree)
    show.txt            the terminal drawing of the same sentence
    f1_by_length.png    onparse eval --plots                   (model against the baselines)
    label_recall.png    onparse eval --plots
    training-curves.png onparse plot-log

    python examples/make_figures.py [--out examples/figures] [--model M --log LOG | --tiny]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_LOG = os.path.join(HERE, "default-model-metrics.jsonl")


def train_tiny(folder: str, sentences: int, epochs: int, max_time: str) -> str:
    """Train the tiny preset on the first ``sentences`` gold sentences; returns the run folder."""
    from onparse import load_gold

    corpus = os.path.join(folder, "corpus.txt")
    gold = load_gold("wsj")
    with open(corpus, "w", encoding="utf-8") as handle:
        for sentence in gold.sentences[:sentences]:
            handle.write(" ".join(sentence.words) + "\n")
    run = os.path.join(folder, "run")
    # Larger batches and windows than the tiny preset's: fewer, cheaper steps per epoch, so a
    # few epochs (a curve worth drawing) fit in the time cap.
    command = [sys.executable, "-m", "onparse", "train", "--preset", "tiny", "--corpus", corpus,
               "--epochs", str(epochs), "--batch-size", "16", "--bptt", "35", "--lr", "20",
               "--max-time", max_time, "--out", run, "--device", "cpu", "--threads", "1"]
    print("$", " ".join(command[1:]), file=sys.stderr)
    subprocess.run(command, check=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    return run



def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(HERE, "figures"), help="folder for the pictures")
    parser.add_argument("--model", default=None, help="checkpoint to draw [default: the bundled model]")
    parser.add_argument("--tiny", action="store_true", help="train and draw a tiny model instead")
    parser.add_argument("--log", default=None, help="metrics.jsonl or run folder for the training curves")
    parser.add_argument("--sentences", type=int, default=800, help="training sentences of the tiny run")
    parser.add_argument("--epochs", type=int, default=15, help="epochs of the tiny run")
    parser.add_argument("--max-time", default="40s", help="time cap of the tiny run")
    parser.add_argument("--sentence", default="wsj10-sample-test:3", help="gold sentence drawn by `show`")
    args = parser.parse_args(argv)

    import torch

    import onparse
    from onparse.pictures.figures import plot_eval_with_baselines, plot_log
    from onparse.pictures.sentence_figure import plot_sentence
    from onparse.files.training_log import read_log
    from onparse.files.pretrained import DEFAULT_NAME, default_model_path
    from onparse.gold.gold_trees import read_gold
    from onparse.induce import views_from_lines
    from onparse.pictures.show import render_view
    from onparse import load_gold
    from onparse.trees.tree import leaves

    started = time.monotonic()
    torch.manual_seed(0)
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="onparse-figures-") as scratch:
        model_path, log, tiny = args.model, args.log, False
        if model_path is None and not args.tiny and default_model_path() is not None:
            model_path, name = default_model_path(), DEFAULT_NAME
            log = log or (DEFAULT_LOG if os.path.exists(DEFAULT_LOG) else None)
        elif model_path is None:
            run = train_tiny(scratch, args.sentences, args.epochs, args.max_time)
            model_path, log, tiny = os.path.join(run, "best.pt"), log or run, True
            name = "tiny LM"
        else:
            name = os.path.basename(os.path.dirname(os.path.abspath(model_path))) + "/" + os.path.basename(model_path)
        # A bundle keeps its own members (its trees are averaged); one checkpoint reads layer 2.
        parser = onparse.load(model_path, device="cpu")
        written = []

        # onparse show --gold wsj10-sample-test:3 -o show.png
        golds = read_gold(args.sentence)
        line = " ".join(leaves(golds[0].tree))
        (_, view), = views_from_lines([line], parser, golds=golds, tokenize=False)
        caption = f"model: {name}  ·  gold: {args.sentence}"
        written.append(plot_sentence(view, os.path.join(args.out, "show.png"), caption))
        with open(os.path.join(args.out, "show.txt"), "w", encoding="utf-8") as handle:
            handle.write(render_view(view) + "\n")
        written.append(os.path.join(args.out, "show.txt"))

        # onparse eval --gold wsj10-sample-test --plots DIR (the model against the baselines, on
        # the test half: sentences that chose nothing)
        gold = load_gold("wsj10-sample-test")
        scores = parser.score(gold)
        label = f"{name} ({parser.describe_average()})"
        written += plot_eval_with_baselines(scores.result, gold, args.out, label, formats=("png",))

        # onparse plot-log RUN --out training-curves.png
        if log is not None:
            training = read_log(log)
            caption = f"run: {name}" + (f"  ·  preset {training.preset}" if training.preset else "")
            if tiny:
                caption += f"  ·  {args.sentences} sentences of the NLTK treebank sample"
            written.append(plot_log(training, os.path.join(args.out, "training-curves.png"), caption=caption))
    for path in written:
        print(f"{path}  ({os.path.getsize(path) / 1024:.0f} KiB)")
    print(f"done in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
