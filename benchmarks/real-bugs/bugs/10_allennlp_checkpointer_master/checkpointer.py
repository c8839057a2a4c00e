import os


class DeepspeedCheckpointer:
    def __init__(self, serialization_dir, keep_last=2):
        self.serialization_dir = serialization_dir
        self.keep_last = keep_last
        self._saved = []

    def save_checkpoint(self, epoch, trainer):
        tag = f"epoch_{epoch}"
        trainer.model_engine.save_checkpoint(self.serialization_dir, tag)
        self._saved.append(tag)
        while len(self._saved) > self.keep_last:
            old = self._saved.pop(0)
            path = os.path.join(self.serialization_dir, old)
            if os.path.isdir(path):
                os.rename(path, path + ".old")
