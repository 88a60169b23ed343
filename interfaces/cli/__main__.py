"""`python -m interfaces.cli`: the `memagent` command line."""

import sys

from interfaces.cli.main import main

sys.exit(main())
