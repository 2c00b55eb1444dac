"""`python -m elsai.cli`: the `elsai` command without the console script (tests, odd installs)."""

from elsai.cli import main

raise SystemExit(main())
