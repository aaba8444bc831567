"""``python -m attn_studio`` does what the ``attn-studio`` command does."""

import sys

from attn_studio.cli import main

if __name__ == "__main__":
    sys.exit(main())
