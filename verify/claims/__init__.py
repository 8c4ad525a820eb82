"""Checkers, one module per topic: each registers the claims of one part of a paper with
:func:`attnsim.verify.registry.checker` and returns measurements for :func:`attnsim.verify.check.run_check`.
"""
