"""``python -m subnet.evaluate``."""

import sys

from subnet.evaluate.cli import main

sys.exit(main())
