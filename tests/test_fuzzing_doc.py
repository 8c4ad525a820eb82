"""Every Python example in docs/fuzzing.md runs as written: its blocks are executed in order in one namespace
and every test function they define is called (a fixture argument gets the plugin's check)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from attnsim.verify.pytest_plugin import check_construction

DOC = Path(__file__).resolve().parents[1] / "docs" / "fuzzing.md"


def test_every_example_of_docs_fuzzing_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 4
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    tests = {name: fn for name, fn in namespace.items() if name.startswith("test_") and callable(fn)}
    assert {"test_my_construction", "test_my_construction_with_the_fixture", "test_rows_sum_to_one",
            "test_pairs_sit_where_their_kind_says"} <= set(tests)
    for name, fn in tests.items():
        if "attnsim_check" in inspect.signature(fn).parameters:
            fn(attnsim_check=check_construction)
        else:
            fn()
