"""``python -m hybrid.cli``: the same as the ``dphybrid`` command."""

import sys

from hybrid.cli import main

sys.exit(main())
