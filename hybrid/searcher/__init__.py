"""Stage 2, the search: exact backends certify what the testers propose.

``search`` runs propose -> certify -> improve -> bisect -> global -> grow for discrete
mechanisms and hands continuous ones to ``continuous_search`` (enclosure-certified events
from ``numeric_events`` / ``regions``); both share ``state`` (one run's state and result,
limits in ``budget``) and fall back to ``statistical`` bounds when nothing is certified.
``certify`` computes exact ratios of witness files.
"""
