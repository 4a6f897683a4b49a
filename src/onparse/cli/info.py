"""``onparse info``: what a model is (the bundled one by default), from its checkpoint metadata."""
import json
import os

import click

from .common import model_name, model_option

#: Score keys recorded per (gold set, layer, decoder), in the order they are printed.
SCORE_KEYS = (("sentence_f1_onlstm", "sent. F1 ON-LSTM"), ("sentence_f1_kim", "sent. F1 Kim"),
              ("corpus_f1", "corpus F1"), ("corpus_f1_evalb", "EVALB F1"))


def describe(blob: dict, name: str, path: str) -> str:
    """A human-readable description of a checkpoint dict (see :mod:`onparse.checkpoint`)."""
    config, meta = blob["config"], blob.get("metadata", {})
    sizes = [config["hidden_size"]] * (config["n_layers"] - 1) + [config["embedding_size"]]
    n_params = meta.get("parameters") or sum(t.numel() for t in blob["state_dict"].values())
    lines = [
        f"model: {name}",
        f"file: {path} ({os.path.getsize(path) / 1e6:.1f} MB, {meta.get('weights', 'float32')} weights)",
        f"architecture: {config['n_layers']} ON-LSTM layers of {'/'.join(map(str, sizes))} units, chunk size "
        f"{config['chunk_size']}, embedding {config['embedding_size']} tied to the decoder, vocabulary "
        f"{len(blob['vocab']):,}; {n_params:,} parameters",
    ]
    if meta.get("onparse_version"):
        lines.append(f"written by: onparse {meta['onparse_version']}")
    train = meta.get("train_config") or {}
    corpus = (meta.get("corpus") or {}).get("source")
    if train or corpus:
        parts = [f"corpus {corpus}" if corpus else None,
                 f"preset {meta['preset']}" if meta.get("preset") else None,
                 f"seed {train['seed']}" if "seed" in train else None,
                 f"{meta['epoch']} epochs" if "epoch" in meta else None,
                 f"{meta['step']:,} steps" if "step" in meta else None,
                 "averaged SGD weights" if meta.get("averaged") else None]
        lines.append("training: " + ", ".join(p for p in parts if p))
    init = meta.get("init_from")
    if isinstance(init, dict):
        source = (init.get("corpus") or {}).get("source")
        lines.append(f"started from: {init.get('checkpoint')}"
                     + (f" (corpus {source}, epoch {init.get('epoch')}, seed {init.get('seed')})" if source else ""))
    ppl = [f"{split} {meta[key]:.2f}" for split, key in (("valid", "valid_ppl"), ("test", "test_ppl"))
           if isinstance(meta.get(key), (int, float))]
    if ppl:
        lines.append("perplexity: " + ", ".join(ppl) + (f" ({meta['perplexity_note']})" if meta.get("perplexity_note") else ""))
    if meta.get("selection"):
        lines.append(f"selected by: {meta['selection']}")
    if meta.get("recipe"):
        lines.append(f"recipe: {meta['recipe']}")
    scores = meta.get("scores") or []
    if scores:
        lines += ["", f"unlabeled F1 (%) on {meta.get('scores_gold', 'the gold sets')}:",
                  f"  {'gold':8}{'layer':>6}  {'decoder':8}" + "".join(f"{title:>18}" for _, title in SCORE_KEYS)]
        for r in scores:
            lines.append(f"  {r['gold']:8}{r['layer']:>6}  {r['decoder']:8}"
                         + "".join(f"{100 * r[key]:>18.1f}" for key, _ in SCORE_KEYS))
    return "\n".join(lines)


@click.command("info")
@model_option
@click.option("--json", "as_json", is_flag=True, help="Print the config and metadata as JSON.")
def info_command(model_paths, as_json):
    """Describe a model: architecture, training corpus and recipe, perplexity and recorded
    parsing scores.  Without --model: the model bundled with onparse (the one `onparse induce`
    and `onparse eval` use by default).

    \b
    onparse info
    onparse info --model runs/small/best.pt --json
    """
    from ..checkpoint import load_checkpoint
    from ..pretrained import resolve

    if len(model_paths) > 1:
        raise click.UsageError("onparse info describes one model file at a time")
    model_path = model_paths[0] if model_paths else None
    path = resolve(model_path)
    blob = load_checkpoint(path, bundles=True)
    name = model_name(model_paths)
    if "models" in blob:
        if as_json:
            click.echo(json.dumps(bundle_summary(blob, name, path), indent=2))
        else:
            click.echo(describe_bundle(blob, name, path))
        return
    if as_json:
        click.echo(json.dumps({"model": name, "path": path, "config": blob["config"],
                               "vocab_size": len(blob["vocab"]), "metadata": blob.get("metadata", {})}, indent=2))
    else:
        click.echo(describe(blob, name, path))


def bundle_summary(blob: dict, name: str, path: str) -> dict:
    """What ``info --json`` prints for a bundle: its metadata, members and models."""
    return {"model": name, "path": path, "metadata": blob.get("metadata", {}), "members": blob["members"],
            "models": [{"config": m["config"], "vocab_size": len(m["vocab"]), "metadata": m.get("metadata", {})}
                       for m in blob["models"]]}


def describe_bundle(blob: dict, name: str, path: str) -> str:
    """A human-readable description of a bundle: its recipe, members, models and scores."""
    from ..bundle import Member

    meta = blob.get("metadata", {})
    models = blob["models"]
    members = [Member.from_dict(m) for m in blob["members"]]
    weights = (models[0].get("metadata") or {}).get("weights", "float32")
    lines = [f"model: {name}",
             f"file: {path} ({os.path.getsize(path) / 1e6:.1f} MB, {weights} weights): a bundle of "
             f"{len(models)} models whose trees are averaged over {len(members)} members"]
    for key, title in (("recipe", "recipe"), ("selection", "selected by"), ("members_rule", "members")):
        if meta.get(key):
            lines.append(f"{title}: {meta[key]}")
    lines += ["", "members (in tie-breaking order): " + "; ".join(m.label(len(models)) for m in members), ""]
    for i, entry in enumerate(models):
        lines.append(f"model {i + 1}:")
        lines += ["  " + line for line in describe(entry, name, path).splitlines()[2:]]
    scores = meta.get("scores") or []
    if scores:
        lines += ["", f"unlabeled F1 (%) on {meta.get('scores_gold', 'the gold sets')}:",
                  f"  {'gold':8}  {'trees':28}" + "".join(f"{title:>18}" for _, title in SCORE_KEYS)]
        for r in scores:
            lines.append(f"  {r['gold']:8}  {r['trees']:28}" + "".join(f"{100 * r[key]:>18.1f}" for key, _ in SCORE_KEYS))
    return "\n".join(lines)


def register(group: click.Group) -> None:
    group.add_command(info_command)
