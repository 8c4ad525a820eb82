"""The optional torch wing: importing PyTorch / Hugging Face models into the reference model
(:mod:`.model_import`, :mod:`.maps`), an oracle that executes calls through torch's scaled dot-product
attention (:mod:`.oracle`) and the same kernel as a backend of the batched engine (:mod:`.backend`).

Nothing outside this package imports torch; install it with ``pip install -e '.[torch]'``.
"""
