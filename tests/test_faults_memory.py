"""The fault catalogue's memory caps that need a real process or the armed backstop (docs/faults.md): limits read
from the environment, a --max-memory below what the libraries need to load, and an allocation refused before its
MemoryError could be built. Each is one line naming the parameter, exit 2."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_process import CLI, one_line
from limits import limit

SMALL_CHECK = ["check", "two_heads.lemma_3_1", "--N", "16", "--M", "4", "--d", "2"]


@pytest.mark.parametrize(("env", "args", "phrase"), [
    ({"ATTNSIM_MAX_MEMORY": "lots"}, [], "ATTNSIM_MAX_MEMORY"),
    ({"ATTNSIM_MAX_TIME": "garbage"}, [], "ATTNSIM_MAX_TIME"),
    ({"ATTNSIM_MAX_TIME": "1"}, ["--N", "1024", "--d", "8", "--numerics", "exact"], "--max-time"),
    ({}, ["--max-memory", "1M"], "--max-memory"),
], ids=["max-memory-env-text", "max-time-env-text", "max-time-env-read-by-check", "max-memory-below-the-libraries"])
def test_the_environment_and_a_cap_below_the_libraries_are_one_line(env, args, phrase, tmp_path: Path):
    """The limits from the environment are read inside the CLI's own handling (a malformed one is one line,
    not a traceback, and ``check`` honours ``$ATTNSIM_MAX_TIME``); a ``--max-memory`` too small to map numpy's
    extension modules names itself instead of surfacing numpy's ImportError."""
    p = subprocess.run([*CLI, *SMALL_CHECK, *args], capture_output=True, text=True, timeout=limit(120),
                       cwd=tmp_path, env={k: v for k, v in {**os.environ, **env}.items()
                                          if k not in ("ATTNSIM_MAX_MEMORY", "ATTNSIM_MAX_TIME") or k in env})
    assert p.returncode == 2 and phrase in one_line(p) and one_line(p).startswith("error: "), p.stderr


@pytest.mark.parametrize("kind", ["ImportError", "SystemError"])
def test_a_library_that_fails_to_load_under_the_backstop_is_one_line(kind: str, tmp_path: Path, monkeypatch,
                                                                       capsys):
    """Under a tiny address-space limit CPython sometimes ends a library's import in ``SystemError: error return
    without exception set`` (an allocation that failed in C without setting MemoryError) instead of an
    ImportError; both name the limit and the library in one line, exit 2. A SystemError outside any library's
    import is a real fault and stays a traceback."""
    from attnsim.verify.cli.app import main
    from attnsim.verify.limits import BACKSTOP_ENV

    library = tmp_path / "site-packages" / "heavylib"
    library.mkdir(parents=True)
    (library / "__init__.py").write_text(f"raise {kind}('error return without exception set')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site-packages"))
    monkeypatch.setenv(BACKSTOP_ENV, "1")
    with pytest.raises(SystemExit) as ended:
        main(["claims"], arm=lambda: __import__("heavylib"))
    err = capsys.readouterr().err.strip()
    assert ended.value.code == 2 and err.startswith("error: ") and "heavylib" in err and "memory" in err, err

    def fault() -> None:
        raise SystemError("not an import")

    with pytest.raises(SystemError, match="not an import"):
        main(["claims"], arm=fault)


def test_an_allocation_refused_before_its_memory_error_could_be_built_is_one_line(tmp_path: Path, monkeypatch,
                                                                                   capsys):
    """Under a 1 MiB cap CPython can fail outside any import, in the CLI library's own call of the command, with
    ``SystemError: <function ...> returned NULL without setting an exception``: an allocation refused before its
    MemoryError could be built. It is the cap's one line naming ``--max-memory``, exit 2; without the backstop
    armed the same error is a real fault and stays a traceback."""
    from attnsim.verify.cli.app import main
    from attnsim.verify.limits import BACKSTOP_ENV

    def refused() -> None:
        raise SystemError("<function _main at 0x7f89f7c4d940> returned NULL without setting an exception")

    monkeypatch.setenv(BACKSTOP_ENV, "1")
    with pytest.raises(SystemExit) as ended:
        main(["claims"], arm=refused)
    err = capsys.readouterr().err.strip()
    assert ended.value.code == 2 and err.startswith("error: ") and "--max-memory" in err and "\n" not in err, err
    monkeypatch.delenv(BACKSTOP_ENV)
    with pytest.raises(SystemError, match="returned NULL"):
        main(["claims"], arm=refused)
