"""What ddplint is: its version, its rules' codes and where its rule pages live online."""

__version__ = "0.1.0"
__url__ = "https://github.com/ddplint/ddplint"

# The rule registry's codes, in its order (a test compares them): flake8's plugin decides from
# them whether flake8 reports any, without loading the rules.
RULE_CODES = (
    "DDP001",
    "DDP002",
    "DDP003",
    "DDP004",
    "DDP005",
    "DDP006",
    "DDP007",
    "DDP008",
    "DDP009",
    "DDP010",
    "DDP011",
    "DDP012",
    "DDP013",
)


def rule_url(code: str) -> str:
    return f"{__url__}/blob/main/rules/{code}.md"
