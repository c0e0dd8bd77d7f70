.PHONY: setup test test-all lint bench demo run

setup:
	scripts/setup.sh

test:
	scripts/test.sh

test-all:
	scripts/test.sh --slow

lint: setup
	.venv/bin/ruff check . && .venv/bin/mypy

demo: setup
	.venv/bin/python -m scoring demo

run: setup
	.venv/bin/python -m subnet.localnet --miners 3 --rounds 2
