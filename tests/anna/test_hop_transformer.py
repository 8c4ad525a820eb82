"""Our direct induction-heads and k-hop ANNA-transformers (anna.thm_5_4_direct, anna.thm_5_6_direct): exact, counted."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.sim.anna.errors import AnnaInputError
from attnsim.sim.anna.hop_transformer import hop_mechanism, induction_transformer, khop_transformer, trie_depth
from attnsim.sim.anna.tasks import hop_labels, hop_string
from attnsim.sim.anna.transformer import size_from_ledger
from attnsim.sim.ledger import Ledger


@pytest.mark.parametrize("N, fan, alphabet", [(2, 2, 2), (17, 2, 3), (40, 3, 4), (81, 3, 9), (100, 4, 25)])
def test_induction_heads_match_the_direct_answer(N, fan, alphabet):
    rng = np.random.default_rng(N)
    model = induction_transformer(N, fan, hop_mechanism("ema"))
    for _ in range(3):
        text = hop_string(rng, N, alphabet)
        led = Ledger()
        assert np.array_equal(model(text, ledger=led), hop_labels(text, 1))
        size = size_from_ledger(led)
        assert size["layers"] == trie_depth(N, fan) + 1
        assert size["heads"] == trie_depth(N, fan) * fan and size["qk_dim"] == 2 and size["v_dim"] == 1


@pytest.mark.parametrize("k", [1, 2, 3, 4, 7, 8, 13, 32])
def test_k_hop_matches_the_direct_answer_with_log_k_layers(k):
    rng = np.random.default_rng(k)
    N, fan = 60, 2
    model = khop_transformer(N, k, fan, hop_mechanism("ema"))
    for alphabet in (2, 3, 6):
        text = hop_string(rng, N, alphabet)
        led = Ledger()
        assert np.array_equal(model(text, ledger=led), hop_labels(text, k))
        assert size_from_ledger(led)["layers"] == trie_depth(N, fan) + 2 + (k.bit_length() - 1)


def test_algorithm_1_at_radius_zero_gives_the_same_answers():
    rng = np.random.default_rng(5)
    text = hop_string(rng, 48, 4)
    model = khop_transformer(48, 6, 3, hop_mechanism("alg1", seed=2))
    assert np.array_equal(model(text, ledger=Ledger()), hop_labels(text, 6))


def test_answers_are_not_all_sinks_on_small_alphabets():
    text = hop_string(np.random.default_rng(0), 64, 3)
    got = khop_transformer(64, 5, 2, hop_mechanism("ema"))(text, ledger=Ledger())
    assert (got >= 0).mean() > 0.5


@pytest.mark.parametrize("build, match", [
    (lambda: khop_transformer(16, 0, 2, hop_mechanism("ema")), "^k:"),
    (lambda: induction_transformer(16, 1, hop_mechanism("ema")), "^fan:"),
    (lambda: hop_mechanism("softmax"), "^mechanism:"),
    (lambda: induction_transformer(8, 2, hop_mechanism("ema"))(np.array([1, -2, 3]), ledger=Ledger()), "^string:"),
])
def test_bad_input_names_its_parameter(build, match):
    with pytest.raises(AnnaInputError, match=match):
        build()
