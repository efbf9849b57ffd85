"""``python -m schedlab.cli``."""

import sys

from . import main

sys.exit(main())
