"""The `lookout` command: parser.py declares every command and option, main.py runs each; one
module per command. Nothing outside this package imports it."""
