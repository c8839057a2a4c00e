"""Front-ends: the command line, the flake8 plugin, the language server."""
