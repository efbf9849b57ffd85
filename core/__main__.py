"""``python -m schedlab``."""

from .cli import main

main()
