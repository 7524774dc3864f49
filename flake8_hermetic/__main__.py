"""``python -m flake8_hermetic``: the ``flake8-hermetic`` command line."""

import sys

from flake8_hermetic.cli import main

if __name__ == "__main__":
    sys.exit(main())
