"""Stage 3, the suite runner: many searches in parallel, logged, resumable and reported.

``suite_file`` reads suites (built-in ones in ``builtin/``: ``discrete``, ``statdp``,
``dpsniper``), ``runner`` runs their entries on joblib or dask (each entry in a process of
its own, ``entry_process``), ``results_log`` keeps the fsynced JSONL log, ``report`` and
``plots`` turn it into tables and a bar plot.
"""
