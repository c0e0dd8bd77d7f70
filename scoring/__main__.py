"""``python -m scoring``: the scorer's command line, :mod:`subnet.scoring_cli` (an entry point sits
on top of every layer)."""

from subnet.scoring_cli import main

if __name__ == "__main__":
    raise SystemExit(main())
