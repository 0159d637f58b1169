"""``python -m bench [--quick] [--only NAMES] [--out FILE] [--readme FILE]``: every benchmark, one document.

The logic lives in :mod:`bench.harness`.
"""

from bench.harness import main

raise SystemExit(main())
