"""``python -m attn_studio`` does what the ``attn-studio`` command does."""

import os
import sys

# One BLAS thread, set before NumPy loads (see attn_studio.cli, which does the same for the command).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from attn_studio.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
