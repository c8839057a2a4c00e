import os

import torch
from lightning.pytorch import Trainer
from lightning.pytorch.callbacks import ModelCheckpoint


class ModelCheckpointWithOnnx(ModelCheckpoint):
    CKPT_EXTENSION = ".ckpt"
    ONNX_EXTENSION = ".onnx"

    def __init__(self, export_to_onnx=True, onnx_params=None, **kwargs):
        super().__init__(**kwargs)
        self.export_to_onnx = export_to_onnx
        self.onnx_params = onnx_params or {"opset_version": 13}

    def _save_checkpoint(self, trainer: Trainer, filepath: str) -> None:
        if trainer.is_global_zero:
            trainer.save_checkpoint(filepath + self.CKPT_EXTENSION, self.save_weights_only)
            self._last_global_step_saved = trainer.global_step
            if self.export_to_onnx:
                self._export(trainer, filepath)

    def _export(self, trainer, filepath):
        module = trainer.lightning_module
        example = module.example_input_array
        module.to_onnx(filepath + self.ONNX_EXTENSION, example, **self.onnx_params)
        if not os.path.exists(filepath + self.ONNX_EXTENSION):
            raise RuntimeError("onnx export failed")
