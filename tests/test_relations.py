"""Parameter relations that depend on another parameter (attnsim.verify.relations)."""

from __future__ import annotations

import pytest

from attnsim.verify.registry import UsageError
from attnsim.verify.relations import check_relations


def test_the_hop_count_is_held_to_n_only_where_hops_run():
    small = {"N": 4, "P": 2, "k": 5, "alphabet": 4}
    for protocol in ("sort", "scan", "sum"):  # they never read k or the alphabet: the defaults are not refused
        check_relations("anna.cor_b_9", {**small, "protocol": protocol})
    with pytest.raises(UsageError, match="must be <= N = 4") as err:
        check_relations("anna.cor_b_9", {**small, "protocol": "khop"})
    assert err.value.param == "k"
    with pytest.raises(UsageError) as err:
        check_relations("anna.khop", {"N": 4, "k": 5})  # no protocol choice: hops always run
    assert err.value.param == "k"
