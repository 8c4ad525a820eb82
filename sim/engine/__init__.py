"""The batched execution engine (float64): rounds of same-shaped single-head oracle calls as tensor
operations, streamed so that no N × N matrix exists, on a serial or Dask scheduler.

* :mod:`~attnsim.sim.engine.backend` — who computes a batch's attention (numpy here; torch in
  :mod:`attnsim.sim.torch.backend`);
* :mod:`~attnsim.sim.engine.batch` — a batch of calls: gathered inputs, spec checks, ledger, execution;
* :mod:`~attnsim.sim.engine.schedulers` — serial or Dask, outputs always in submission order;
* :mod:`~attnsim.sim.engine.runner` — the one batched JobRunner (float64 here, fixed-width formats in their numerics);
* :mod:`~attnsim.sim.engine.blockwise` / :mod:`~attnsim.sim.engine.simulate` — two_heads.lemma_3_1
  and cor_3_2 vectorised;
* :mod:`~attnsim.sim.engine.causal` — two_heads.thm_3_5 (fused scheme) vectorised.

Exact attention through python-flint matrices belongs to the numerics (:mod:`attnsim.sim.numerics.flint_kernels`).
"""
