"""TinT (Panigrahi, Malladi, Xia, Arora, ICML 2024): a transformer that fine-tunes a transformer.

Modules, one idea each:

* ``configs``            aux and TinT configurations, validation, the published configs
* ``arith``              exact (fmpq + deterministic oracles) / mp / float64 / count arithmetic
* ``aux_model``          the pre-LN decoder and its hand-derived reference SGD step (tint.sgd_step)
* ``layers``             TinT's primitive layers: BD, MX, gates, positional maps, attention, MLP
* ``modules``            linear forward / backward / descent and prefix packing (tint.linear_*)
* ``modules_nonlinear``  layer norm, self-attention and activation modules (tint.ln_*, attn_*, act_*)
* ``linear_attention``   softmax simulating linear attention (tint.thm_2_5)
* ``builder``            instantiate a TinT for a config and count its parameters (tint.size)
* ``pipeline``           run it module by module: forward -> gradient -> backward + descent -> forward
* ``network``            the same as one network: layers over one residual stream, one ``forward`` call
* ``network_io``         the network's input stream and what is read off it
* ``network_size``       the network's parameters, counted from its weight arrays (tint.size)
* ``reconcile``          the authors' code's three choices, each measured alone
* ``experiments``        TinT against the reference, one approximation at a time
* ``cases``              the shared table of named cases
* ``mlp_aux``            TinT for a 2-layer MLP auxiliary model (tint.rebuttal_mlp_aux)
* ``fd_end_to_end``      finite differences over all parameters vs the per-layer scheme (tint.rebuttal_fd_end_to_end)
"""
