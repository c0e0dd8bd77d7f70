"""``python -m subnet.localnet``: see :mod:`subnet.localnet`."""

import sys

if __name__ == "__main__":
    try:
        from subnet.localnet.run import main
    except KeyboardInterrupt:  # Ctrl-C while the libraries load: nothing was started yet
        print("localnet: interrupted while starting", file=sys.stderr)
        sys.exit(130)
    sys.exit(main())
