"""Equivalence tests of jaxndimage against SciPy."""
