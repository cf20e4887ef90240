"""`python -m selfbench`."""

import sys

from selfbench.cli import main

sys.exit(main())
