.PHONY: setup test lint bench demo

setup:
	scripts/setup.sh

test:
	scripts/test.sh

lint: setup
	.venv/bin/ruff check . && .venv/bin/mypy

demo: setup
	.venv/bin/python -m scoring demo
