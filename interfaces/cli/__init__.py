"""The `memagent` command line: `main.py` parses the commands; one module per command group."""

import gc

# A command imports about 1,700 modules and builds the container first: objects that live as long as
# the process. At the default threshold a collection runs every 700 allocations and walks them again
# and again, a seventh of a command's start-up CPU. Collections stay on, rarer, until the app runs:
# then it freezes what start-up built and goes back to the default (interfaces/lifecycle.py).
gc.set_threshold(50_000, 20, 20)
