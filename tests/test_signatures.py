"""The signatures ddplint binds positional arguments with match the installed torch."""

from __future__ import annotations

import importlib
import inspect

import pytest

from ddplint.model.signatures import SIGNATURES

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("qualname", sorted(SIGNATURES))
def test_positional_parameters_match_torch(qualname: str) -> None:
    module_name, _, attr = qualname.rpartition(".")
    target = getattr(importlib.import_module(module_name), attr)
    params = list(inspect.signature(target.__init__).parameters.values())[1:]
    positional = [p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    # ddplint may list a prefix: the parameters after it are never passed by position in practice.
    assert positional[: len(SIGNATURES[qualname])] == list(SIGNATURES[qualname])
