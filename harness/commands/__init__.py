"""One module per subcommand. Each exposes `add_parser(subparsers)`, which registers the command and sets
`func` to a `run(args) -> int` that returns the exit code."""
