"""Rank-divergence analysis: which collectives each rank class performs, and where they differ."""
