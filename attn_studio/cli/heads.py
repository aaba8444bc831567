"""``attn-studio heads ...``: every head of a trained model on one sentence, as CSV."""

from __future__ import annotations

import argparse

from .basics import PROG, Parser, UsageError, fail

def heads_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=f"{PROG} heads",
        description="Every head of a trained model on one sentence: its report card (entropy, confidence, "
                    "where it looks, its role), optionally the heads that link two words, each head's "
                    "importance and the head detector's previous-token, duplicate-token and induction scores, "
                    "as CSV (one row per head, layers and heads from 1).",
        epilog=f'Example: {PROG} heads --model all-MiniLM-L6-v2 --text "The animal didn\'t cross the street '
               f'because it was too tired." --find it animal --importance --out heads.csv; '
               f'{PROG} heads --detect --seq-len 20 --seed 0 --out detected.csv',
    )
    parser.add_argument("--model", metavar="NAME|FOLDER", default=None,
                        help="all-MiniLM-L6-v2 (default), a Hugging Face cache name or a model folder")
    parser.add_argument("--text", default=None,
                        help="the sentence to run (required unless --detect: then the report card is measured on "
                             "the repeated tokens)")
    parser.add_argument("--find", nargs=2, metavar=("QUERY", "KEY"),
                        help="rank the heads by how much QUERY attends to KEY: words of the sentence, "
                             "or #N for token N from 0")
    parser.add_argument("--importance", action="store_true",
                        help="also silence each head in turn and measure how far the sentence embedding moves")
    parser.add_argument("--detect", action="store_true",
                        help="also score every head as previous-token, duplicate-token and induction head "
                             "(TransformerLens's detect_head) on a random stretch of tokens repeated twice")
    parser.add_argument("--seq-len", type=int, default=None, dest="seq_len", metavar="N",
                        help="--detect: the length of the random stretch, read twice (default 20, or what the "
                             "model's positions hold)")
    parser.add_argument("--seed", type=int, default=None, metavar="S",
                        help="--detect: the seed of the random stretch (default 0)")
    parser.add_argument("--top", type=int, default=5, help="heads listed per line of the summary (default 5)")
    parser.add_argument("--out", required=True, metavar="FILE", help="the CSV file to write")
    return parser


def heads_main(argv: list[str]) -> int:
    """``attn-studio heads ...``: print the top heads and write every head's report as CSV."""
    from ..pretrained import ModelError
    from ..pretrained.head_table import detect_run, head_table, repeated_source, summary, table_csv
    from ..session import SessionError, write_atomic
    from ..trained import open_model
    from ..trained.command import CommandError, check_text

    try:
        args = heads_parser().parse_args(argv)
        if args.top < 1:
            raise UsageError(f"--top must be at least 1, got {args.top}")
        if not args.detect and (args.seq_len is not None or args.seed is not None):
            raise UsageError("--seq-len and --seed choose the detector's tokens: use them with --detect")
        if args.text is None and not args.detect:
            raise UsageError("give --text (the sentence to run), or --detect")
        seed = 0 if args.seed is None else args.seed
        if args.text is not None:
            check_text(args.text)
        model = open_model(args.model)
        detected = source = None
        if args.detect:
            # 20 tokens twice unless told, or as many as the model's positions hold (a lab model's 32: 16).
            framed = 2 if getattr(model, "kind", "") == "bert" else 0
            length = min(20, (model.max_positions - framed) // 2) if args.seq_len is None else args.seq_len
            detected = detect_run(model, length, seed)
            source = repeated_source(length, seed)
        run = model.run(args.text) if args.text is not None else detected
        table = head_table(run, find=args.find, importance=args.importance, detect_on=detected,
                           detect_source=source)
    except (UsageError, ModelError, CommandError) as exc:
        return fail(exc)
    try:
        write_atomic(args.out, table_csv(table).encode("utf-8"))
    except SessionError as exc:
        return fail(f"cannot write {args.out}: {exc}", code=1)
    except OSError as exc:
        return fail(f"cannot write {args.out}: {exc.strerror or exc}", code=1)
    print(summary(table, top=args.top))
    print(f"{PROG}: wrote {args.out}")
    return 0

