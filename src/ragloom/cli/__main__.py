"""`python -m ragloom.cli`: the `ragloom` command."""

from ragloom.cli import main

main()
