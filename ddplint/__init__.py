"""ddplint: finds the code patterns that make PyTorch distributed training jobs hang."""

from __future__ import annotations

__version__ = "0.1.0"
__url__ = "https://github.com/ddplint/ddplint"
