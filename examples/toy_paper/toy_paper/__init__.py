"""A toy paper for attnsim, packaged on its own (docs/extending.md).

``toy_paper.toml`` holds the claim, ``construction`` realises it, ``checks`` registers its checker and
broken twins. The package imports nothing of attnsim here, so that attnsim can read the TOML file
without loading the checker.
"""
