"""What a module and a project are: facts of each module, names, signatures, the library catalogue."""
