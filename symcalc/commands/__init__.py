"""One module per subcommand; each defines ``register(subparsers)`` which adds its parser
and sets ``func`` to a function taking the parsed arguments and returning an exit status."""
