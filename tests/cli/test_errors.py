"""The command line's promise: user errors are one `error:` line, never a traceback."""
import os
import subprocess
import sys

import pytest

from companion import cli


def run(*args):
    return subprocess.run([sys.executable, "-m", "companion", *args],
                          capture_output=True, text=True, timeout=120)


def test_help_lists_every_contract_command():
    out = run("--help").stdout
    for name in ("analyze", "calibrate", "judge", "track", "serve", "demo"):
        assert name in out


def test_unknown_command_is_one_error_line():
    result = run("no-such-command")
    assert result.returncode == 2
    assert result.stderr.startswith("error:") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def test_missing_file_is_one_error_line(tmp_path):
    result = run("judge", str(tmp_path / "missing.json"))
    assert result.returncode == 2
    assert result.stderr.startswith("error:") and "Traceback" not in result.stderr


def test_a_bug_is_reported_in_one_line_and_debug_shows_it(monkeypatch, capsys):
    @cli.command("explode", "raise a bug")
    def _explode(p):
        def boom(args):
            raise RuntimeError("kaboom")
        p.set_defaults(run=boom)
    try:
        assert cli.main(["explode"]) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: internal error") and "kaboom" in err and err.count("\n") == 1
        with pytest.raises(RuntimeError):
            cli.main(["--debug", "explode"])
    finally:
        cli.COMMANDS.pop("explode")


def test_a_reader_that_goes_away_ends_the_command_quietly():
    flood = "\n".join([
        "import sys",
        "from companion import cli",
        "@cli.command('flood', 'print without end')",
        "def _flood(p):",
        "    def run(args):",
        "        while True:",
        "            print('x' * 1000)",
        "    p.set_defaults(run=run)",
        "sys.exit(cli.main(['flood']))",
    ])
    proc = subprocess.Popen([sys.executable, "-c", flood], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()                      # as `companion ... | head -1` does
    assert proc.wait(timeout=60) == 0
    assert proc.stderr.read() == b""


@pytest.mark.parametrize("args, wanted", [
    (["train", "--scenes", "0"], "'0' is not a whole number of at least 1"),
    (["train", "--seed", "-1"], "'-1' is not a whole number of at least 0"),
    (["bench", "--seed", "one"], "'one' is not a whole number of at least 0"),
    (["synth", "scenes", "--out", "unused", "--seed", "-4"], "'-4' is not a whole number of at least 0"),
    (["synth", "game", "--out", "unused", "--seed", "2.5"], "'2.5' is not a whole number of at least 0"),
])
def test_seeds_and_counts_below_their_least_are_refused_before_any_work(args, wanted, capsys):
    # (a negative seed used to reach numpy, "expected non-negative integer"; no scenes to
    # train on, a concatenation of nothing)
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: argument --") and wanted in err and err.count("\n") == 1


def test_a_file_that_cannot_be_written_is_named_with_the_reason_alone(tmp_path, capsys):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    assert cli.main(["mat", "--out", str(blocked / "mat.png")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {blocked / 'mat.png'}: ") and "Errno" not in err, err


def test_a_move_that_fails_names_both_files(tmp_path, capsys):
    # (a resumable account is written beside its place and moved there: both names matter)
    @cli.command("move-it", "move a missing file")
    def _move(p):
        p.set_defaults(run=lambda args: os.replace(tmp_path / "gone.json", tmp_path / "account.json"))
    try:
        assert cli.main(["move-it"]) == 2
        err = capsys.readouterr().err
        assert err == f"error: {tmp_path / 'gone.json'} -> {tmp_path / 'account.json'}: No such file or directory\n"
    finally:
        cli.COMMANDS.pop("move-it")
