"""docs/examples/api.ipynb runs as written (nbclient, a fresh Python kernel of this interpreter)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "examples" / "api.ipynb"


def test_the_example_notebook_runs_and_shows_the_record(tmp_path) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = nb.cells[1].outputs[0]["data"]
    assert "pass" in shown["text/plain"] and "inf bits" in shown["text/plain"] and "<table>" in shown["text/html"]
    printed = "".join(o.get("text", "") for o in nb.cells[6].outputs)
    assert printed.startswith("M -> M: must be >= 2")
