"""Limited-precision studies that are not single claims: how many bits each Two Heads construction
needs as N grows (:mod:`.study`, :mod:`.claims_study`), the constructions run block by block in a
chosen format (:mod:`.constructions`) and the exact-score truth they are measured against (:mod:`.truth`).
"""
