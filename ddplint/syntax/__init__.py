"""Text to tree, fast and safe: reading files, parsing with libcst, positions. Knows nothing of rules."""
