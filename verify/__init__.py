"""Checks of the papers' claims: run a construction, compare it with the reference, hold its ledger
counts against the bounds of :mod:`attnsim.theory`, and report.

* ``registry``, ``check``, ``records`` -- checkers, one claim run to one record, the record's JSON encoding;
* ``agreement``, ``cases``, ``approx_cases``, ``strategies`` -- output comparison and the inputs checks use;
* ``sweep``, ``long_run``, ``model_check``, ``layer_record``, ``tint_size`` -- sweeps and longer measurements;
* ``teeth`` -- runs the broken twins of ``twins/`` and expects every check to fail;
* ``claims/`` (checkers), ``report/``, ``precision/``, ``bench/``, ``cli/`` (the ``attnsim`` command).
"""
