"""A run over files: discovery, the prefilter, caches and worker processes around the engine."""
