"""`python -m elsai`: the `elsai` command, for environments without the console script on PATH."""

from elsai.cli import main

raise SystemExit(main())
