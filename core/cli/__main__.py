"""``python -m schedlab.cli``."""

from . import main

main()
