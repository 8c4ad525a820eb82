"""Constructions of Liu, Yu, Sanford, Andoni, Hsu, "Fast attention mechanisms: a tale of parallelism".

One idea per module:

* ``lsh``          -- hash families (random hyperplanes, p-stable, cross-polytope) and their collision probabilities
* ``attention``    -- Algorithm 1 (anna.alg_1), Algorithm 2 (anna.alg_2), exact-match attention
* ``constraints``  -- the ANNA definition as a checker that returns reasons (anna.def_anna)
* ``transformer``  -- ANNA-transformers: token-wise maps around ANNA/EMA heads, sizes from the ledger
* ``constructions``-- Match2 in one layer, one head, dimension 1 (anna.thm_5_2); SUM in one layer
* ``tasks``        -- data generators and references: Match2, k-hop (generator semantics), SUM
* ``mpc``          -- the referee MPC machine (refuses rounds over the s-word budget)
* ``mpc_sort``     -- one-level sample sort on it (for Lemma C.2's uses)
* ``khop``         -- 1-hop and k-hop by pointer doubling, sorted by a stable radix sort on the letter (anna.khop)
* ``mpc_tree``     -- f-ary scan trees hosted on the MPC machines (App. C's s/m-ary trees)
* ``mpc_radix``    -- a multi-level radix sort for small memory (Lemma C.2's uses)
* ``anna_stack``   -- L-layer ANNA-transformers on Algorithm 1 and their reference run
* ``mpc_small``    -- MPC simulating L ANNA layers in memory N^eps' (anna.thm_4_2 = Thm C.3)
* ``mpc_lowrank``  -- low-rank attention by tree summation (anna.lemma_d_2)
* ``message_code`` -- Lemma B.4's sparse code: up to alpha averaged messages decode (anna.lemma_b_4)
* ``mpc_to_anna``  -- the transformer running an MPC protocol (anna.thm_4_1, Lemmas B.5, B.6)
* ``mpc_direct``   -- Thm B.2's transformer, one layer per round, with ANNA heads (anna.cor_b_9)
* ``mpc_scan``     -- f-ary prefix-sum scan in s = N/P + f words, f contacts a round (anna.cor_b_9's regime)
* ``mpc_capacity`` -- Lemma B.13's transformer: k heads a round, bundles per destination (anna.lemma_b_13)
* ``mpc_protocols``-- bitonic sort, prefix sums, k-hop, sample sort, L-layer low rank (anna.thm_4_1, anna.thm_4_4)
* ``reformer``     -- fixed-chunk Reformer, receptive fields and a failing SUM input (anna.prop_e_3)

Nothing here imports ``attnsim.theory`` or ``attnsim.verify``: a construction never knows its bound.
"""
