#!/usr/bin/env python3
"""Bootstrap a local subnet (docker localnet or devchain); see subnet/bootstrap.py and docs/testnet.md."""

import sys
from pathlib import Path

# Runnable from a checkout without installing: the repository root holds the `subnet` package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from subnet.bootstrap import main

if __name__ == "__main__":
    sys.exit(main())
