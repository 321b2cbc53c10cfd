"""The `lookout` command: main.py's table names each command's module, which declares its
arguments and runs them; args.py holds what several declare alike. Nothing outside this package
imports it."""
