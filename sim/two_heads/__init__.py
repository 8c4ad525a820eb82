"""Constructions of Yu & Alman, "Two Heads Are Better than One": a large transformer from calls to a small one.

* ``blocks``      -- Lemma 3.1: one head from oracle calls on pairs of blocks, and the recombination (eq. 1);
* ``jobs``        -- single-head jobs and the plainest runner (one call per job);
* ``packing``     -- Lemma 3.3: H'·L' jobs in one call of a multi-head, multi-layer oracle;
* ``worst_case``  -- Lemma 3.1 and Cor 3.2: a whole unmasked model, layer by layer;
* ``multi_layer`` -- Thms 3.4, 3.5, 5.1: a whole model from per-head job builders, packed;
* ``causal``      -- Claim B.6 and Thm 3.5: causal heads from a causal oracle;
* ``window``      -- Thm 5.1: sliding window and attention sinks in O(N/M) calls;
* ``average``, ``assumptions`` -- Thm 4.1: the average case and its assumptions measured;
* ``converse``    -- Thm 4.2: N/M small instances inside one large call;
* ``hardness``    -- the lower bound after Thm 1.1 made concrete on small instances.
"""
