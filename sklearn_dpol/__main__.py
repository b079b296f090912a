"""Privacy/utility demonstration: ``python -m sklearn_dpol`` (see ``sklearn_dpol._demo``)."""

from ._demo import main

if __name__ == "__main__":
    main()
