"""``onparse agreement``: score members by how much their trees agree on unlabelled text, keep
the most central ones, and optionally write them as a bundle (:func:`onparse.choose_members`)."""
import sys

import click

from .. import WEIGHT_KINDS, OnparseError
from .common import (INT_MAX, check_writable, device_option, force_option, line_limit_option, load_parser,
                     members_options, model_option, pretokenized_option, quiet_option, refuse_model,
                     refuse_overwrite, renamed, renamed_option, threads_option)


@click.command("agreement")
@click.argument("file", type=click.Path(allow_dash=True, dir_okay=False))
@model_option
@members_options
@pretokenized_option
@click.option("--limit", type=click.IntRange(1, INT_MAX), default=2000, show_default=True,
              help="Use the first N lines of at least 3 words.")
@click.option("--keep", type=click.IntRange(1, INT_MAX), default=None,
              help="Members to keep  [default: half of them, rounded up].")
@click.option("--out", "-o", "bundle_path", type=click.Path(dir_okay=False), default=None, metavar="BUNDLE",
              help="Write the kept members, most central first, and their models as a bundle file.")
@renamed_option("--bundle", "--out", "bundle_old", type=click.Path(dir_okay=False), metavar="BUNDLE")
@click.option("--weights", type=click.Choice(WEIGHT_KINDS), default="float16", show_default=True,
              help="How the bundle stores its weights.")
@device_option
@threads_option(apply=True)
@force_option
@quiet_option
@line_limit_option
def agreement_command(file, model_paths, no_verify, layer, decoder, voter, ties, reading, pretokenized, limit, keep,
                      bundle_path, bundle_old, weights, device, force, quiet, max_line_bytes):
    """Choose members (docs/glossary.md) without gold trees: score each member (model x layer x decoder) by its
    trees' agreement with the other models' members on the lines of FILE, raw text that is
    not evaluation text (e.g. your language model's validation text).  Voters take no part in
    the scores; --voter and --ties are written into the bundle (--out).

    A member's score is its mean share of non-trivial spans (not one word, not the whole
    sentence) shared with every member of the other models.  Prints one TSV row per member
    (member, score, rank among the kept ones or -); --out writes the kept ones as a bundle.
    A member whose trees are right- or left-branching chains (more than 90% alike; a grammar
    that collapsed) is never kept, and stderr says so, unless every member is one.

    \b
    onparse agreement valid.txt -m s1/best.pt -m s2/best.pt --layer 2,3 --decode all
    onparse agreement valid.txt -m s1/best.pt -m s2/best.pt --layer 2,3 --out mine.pt
    """
    from .. import choose_members
    from ..induce import read_lines

    bundle_path = renamed(bundle_path, bundle_old, "--bundle", "--out")
    check_writable(bundle_path, "--out")
    refuse_overwrite(bundle_path, "--out", [("input", file)] + [("model", p) for p in model_paths])
    refuse_model(bundle_path, "--out", force)
    parser = load_parser(model_paths, device, layer, decoder, voter=voter, ties=ties, no_verify=no_verify,
                         reading=reading)
    if keep is not None and keep > len(parser.members):
        raise click.BadParameter(f"cannot keep {keep} of {len(parser.members)} members", param_hint="--keep")
    scored, kept, n_sentences, baselines = choose_members(parser, read_lines(file, max_line_bytes=max_line_bytes),
                                                          keep=keep, limit=limit, tokenize=not pretokenized,
                                                          quiet=quiet)
    rank = {index: r + 1 for r, index in enumerate(kept)}
    n_models = len(parser.models)
    click.echo("member\tagreement\tkept")
    for index, (member, score) in enumerate(scored):
        click.echo(f"{member.label(n_models)}\t{score:.4f}\t{rank.get(index, '-')}")
    for index, likeness in baselines.items():
        side = max(likeness, key=likeness.get)
        click.echo(f"left out {scored[index][0].label(n_models)}: its trees are {side}-branching chains "
                   f"(agreement {likeness[side]:.2f} with them); it adds nothing a --voter {side} does not", err=True)
    click.echo(f"kept {len(kept)} of {len(scored)} members, measured on {n_sentences:,} sentences", err=True)
    if bundle_path:
        meta = {"members_rule": f"the {len(kept)} of {len(scored)} members of highest agreement on {file} "
                                f"({n_sentences:,} sentences; onparse agreement)",
                "agreement": [{**m.to_dict(), "agreement": s} for m, s in scored]}
        chosen = parser.with_members([scored[i][0] for i in kept])
        try:
            chosen.save_bundle(bundle_path, weights=weights, metadata=meta)
        except OSError as err:
            raise OnparseError(f"cannot write {bundle_path}: {err.strerror}") from None
        used = len({m.model for m in chosen.members})
        click.echo(f"wrote {bundle_path} ({used} model(s), {len(chosen.members)} members, {weights})", err=True)
    sys.stdout.flush()


def register(group: click.Group) -> None:
    """Add ``agreement`` to the ``onparse`` command group."""
    group.add_command(agreement_command)
