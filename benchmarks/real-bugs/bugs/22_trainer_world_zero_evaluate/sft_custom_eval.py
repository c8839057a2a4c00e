from transformers import TrainerCallback
from trl import SFTTrainer


class SFTCustomEvalTrainer(SFTTrainer):
    def __init__(self, *args, eval_every=500, **kwargs):
        super().__init__(*args, **kwargs)
        self.eval_every = eval_every

    def maybe_evaluate(self, step):
        if step % self.eval_every != 0:
            return None
        if self.is_world_process_zero():
            metrics = self.evaluate(metric_key_prefix="eval")
            self.log(metrics)
            return metrics
        return None


class PeriodicEval(TrainerCallback):
    def __init__(self, trainer):
        self.trainer = trainer

    def on_step_end(self, args, state, control, **kwargs):
        self.trainer.maybe_evaluate(state.global_step)
        return control
