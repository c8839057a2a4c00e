import torch
import torch.distributed as dist


class YOLOTrainer:
    def __init__(self, model, save_dir, loader, distributed):
        self.model = model
        self.save_dir = save_dir
        self.loader = loader
        self.is_distributed = distributed

    def compute_precise_bn_stats(self, num_batches=50):
        self.model.train()
        for i, (imgs, _) in enumerate(self.loader):
            if i >= num_batches:
                break
            with torch.no_grad():
                self.model(imgs.cuda())
        for m in self.model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                dist.all_reduce(m.running_mean)
                m.running_mean /= dist.get_world_size()
                dist.all_reduce(m.running_var)
                m.running_var /= dist.get_world_size()

    def refresh_best_bn(self):
        best_path = self.save_dir / "weights" / "best.pt"
        if not best_path.is_file():
            return False
        self.model.load_state_dict(torch.load(best_path, map_location="cpu")["model"])
        self.compute_precise_bn_stats()
        if self.is_distributed:
            dist.barrier()
        return True
