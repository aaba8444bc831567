"""``attn-studio heads ...``: every head of a trained model on one sentence, as CSV."""

from __future__ import annotations

import argparse

from .basics import PROG, Parser, UsageError, fail

def heads_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=f"{PROG} heads",
        description="Every head of a trained model on one sentence: its report card (entropy, confidence, "
                    "where it looks, its role), optionally the heads that link two words and each head's "
                    "importance, as CSV (one row per head, layers and heads from 1).",
        epilog=f'Example: {PROG} heads --model all-MiniLM-L6-v2 --text "The animal didn\'t cross the street '
               f'because it was too tired." --find it animal --importance --out heads.csv',
    )
    parser.add_argument("--model", metavar="NAME|FOLDER", default=None,
                        help="all-MiniLM-L6-v2 (default), a Hugging Face cache name or a model folder")
    parser.add_argument("--text", required=True, help="the sentence to run")
    parser.add_argument("--find", nargs=2, metavar=("QUERY", "KEY"),
                        help="rank the heads by how much QUERY attends to KEY: words of the sentence, "
                             "or #N for token N from 0")
    parser.add_argument("--importance", action="store_true",
                        help="also silence each head in turn and measure how far the sentence embedding moves")
    parser.add_argument("--top", type=int, default=5, help="heads listed per line of the summary (default 5)")
    parser.add_argument("--out", required=True, metavar="FILE", help="the CSV file to write")
    return parser


def heads_main(argv: list[str]) -> int:
    """``attn-studio heads ...``: print the top heads and write every head's report as CSV."""
    from ..pretrained import ModelError
    from ..pretrained.head_table import head_table, summary, table_csv
    from ..session import SessionError, write_atomic
    from ..trained import open_model
    from ..trained.command import CommandError, check_text

    try:
        args = heads_parser().parse_args(argv)
        if args.top < 1:
            raise UsageError(f"--top must be at least 1, got {args.top}")
        check_text(args.text)
        model = open_model(args.model)
        table = head_table(model.run(args.text), find=args.find, importance=args.importance)
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

