"""python -m subnet.evaluate: a wallet or hotkey name is a plain name, never a path out of the wallets."""

from __future__ import annotations

import pytest

from subnet.evaluate import parse_settings


@pytest.mark.parametrize(("flag", "value"), [("--wallet.name", "../other"), ("--wallet.hotkey", "a/b")])
def test_a_name_with_a_slash_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    argv = ["--endpoint", "http://127.0.0.1:9/v1", "--wallet.name", "validator", flag, value]
    if flag == "--wallet.name":
        argv = ["--endpoint", "http://127.0.0.1:9/v1", flag, value]
    with pytest.raises(SystemExit) as stopped:
        parse_settings(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"argument {flag}: expected a plain name without '/', got {value!r}" in err


@pytest.mark.parametrize(
    ("flag", "value", "complaint"),
    [
        ("--tasks.count", "abc", "argument --tasks.count: expected a whole number, got 'abc'"),
        ("--query.concurrency", "1.5", "argument --query.concurrency: expected a whole number, got '1.5'"),
        ("--rate", "x", "argument --rate: expected a number, got 'x'"),
        ("--temperature", "warm", "argument --temperature: expected a number, got 'warm'"),
    ],
)
def test_a_value_that_is_no_number_names_the_problem_not_a_function(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, complaint: str
) -> None:
    with pytest.raises(SystemExit) as stopped:
        parse_settings(["--endpoint", "http://127.0.0.1:9/v1", flag, value])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and complaint in err and "_positive" not in err
