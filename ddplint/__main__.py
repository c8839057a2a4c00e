from ddplint.integrations.cli import entry

entry()
