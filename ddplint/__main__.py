from ddplint.cli import entry

entry()
