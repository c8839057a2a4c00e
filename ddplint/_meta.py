"""What ddplint is: its version and where its rule pages live online."""

__version__ = "0.1.0"
__url__ = "https://github.com/ddplint/ddplint"


def rule_url(code: str) -> str:
    return f"{__url__}/blob/main/rules/{code}.md"
