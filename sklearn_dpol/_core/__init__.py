"""Numeric core: functions of arrays, scalars and a random generator.

Nothing here knows about estimators. Modules that need numba import their
kernels lazily so that ``import sklearn_dpol`` stays fast.
"""
