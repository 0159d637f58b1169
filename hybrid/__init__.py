"""The hybrid engine: testing proposes witnesses, exact backends certify them.

``search`` finds a certified lower bound on a mechanism's epsilon; ``certify`` computes
the exact ratio of a witness (ours, StatDP's, or an exported classifier attack).
"""

from hybrid.certify import Certificate, Witness, certify, certify_file, load_witnesses
from hybrid.search import Budget, SearchResult, search

__all__ = ["Budget", "Certificate", "SearchResult", "Witness", "certify", "certify_file", "load_witnesses",
           "search"]
