"""Whole-project analyses, built once per project state."""
