"""What a file must spell for the divergence analysis to find a collective in it or through it.

Every finding of DDP004/DDP005 compares collectives, and the simulator makes one only from the
catalogue: a `torch.distributed` collective or checkpoint call, a configured collective, a DDP
or FSDP wrapper (its construction, forward and, in a program that wraps, `backward()`), an
accelerate or DeepSpeed engine (its methods), a name or attribute called `accelerator`, a
method known by its receiver's name (`trainer.save_checkpoint()`, `fabric.barrier()`),
`self.all_gather(...)` or `self.log(..., sync_dist=True)`.
Derived from the catalogue, so a new entry there is a new trigger here.
"""

from __future__ import annotations

from ddplint.model import catalogue as cat

# Spelled by the simulator itself rather than the catalogue (see simulate.py: `_method`, `name`).
# A leading `*` asks for the text anywhere (`trainer.strategy.barrier()`, `self._strategy.barrier()`).
_SIMULATOR_WORDS = frozenset({"accelerator", "sync_dist"})

# Methods whose call is a collective with nothing else to spell: `loss.backward()` all-reduces
# gradients in every module that a module wrapping a model imports, directly or not
# (Analysis.distributed). The byte scan keeps such modules by imports; the definition pass
# takes a definition calling one as a seed, since no name ties it to the wrapping module.
IN_A_PROGRAM_THAT_WRAPS = frozenset({"backward"})


def collective_triggers() -> frozenset[str]:
    """Qualified names (every dotted part must appear as a word) and bare words."""
    return frozenset(
        {
            *(
                name
                for name, call in cat.FUNCTIONS.items()
                if call.role in (cat.Role.COLLECTIVE, cat.Role.WRAPPER, cat.Role.ENGINE)
            ),
            *cat.DISTRIBUTED_ENGINES,
            # `self.trainer.save_checkpoint(...)`: methods known by their receiver's name
            *(
                f"*{receiver}.{method}"
                for entry in cat.NAMED_METHODS
                for receiver in entry.receivers
                for method in entry.methods
            ),
            # `self.evaluate()` in a subclass of transformers' Trainer
            *(
                f"*self.{method}"
                for entry in cat.NAMED_METHODS
                if set(entry.libraries) & cat.LIBRARY_ROOTS
                for method in entry.methods
            ),
            *(f"*self.{method}" for method in cat.LIGHTNING_COLLECTIVES),
            *_SIMULATOR_WORDS,
        }
    )
