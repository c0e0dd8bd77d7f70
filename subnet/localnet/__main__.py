"""``python -m subnet.localnet``: see :mod:`subnet.localnet`."""

import sys

from subnet.localnet.run import main

if __name__ == "__main__":
    sys.exit(main())
