"""`python -m qkv ...` is the `qkv` command (torchrun and other launchers start it this way)."""

import sys

from qkv.apps.cli import main

sys.exit(main())
