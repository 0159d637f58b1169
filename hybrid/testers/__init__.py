"""Stage 1, testing: statistical testers that propose candidates but never prove anything.

``statdp`` (StatDP-style hypothesis test with Fisher's exact test), ``sniper`` with
``attack`` / ``transforms`` / ``features`` (DP-Sniper-style classifier attack), ``audit``
(classic and one-run auditors), ``events`` (the candidate events and their counts) and
``testing`` (one entry point over them, results in DESIGN.md's contract).
"""
