"""One project in one process: load modules, run the rules, apply suppressions and fixes."""
