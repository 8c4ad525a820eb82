"""Speed and memory figures measured in one run, as ratios: the batched float64 engine against direct
attention (:mod:`.engine`) and the torch SDPA oracle against one direct SDPA call (:mod:`.torch_sdpa`).
"""
