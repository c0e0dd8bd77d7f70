.PHONY: setup test lint bench demo run

setup:
	scripts/setup.sh

test:
	scripts/test.sh

lint: setup
	.venv/bin/ruff check . && .venv/bin/mypy

demo: setup
	.venv/bin/python -m scoring demo

run: setup
	.venv/bin/python -m subnet.localnet --miners 3 --rounds 2
