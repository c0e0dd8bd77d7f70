"""``python -m scoring``: see :mod:`scoring.cli`."""

from scoring.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
