import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(local_rank, node_rank, gpus_per_node, world_size, build_model):
    rank = node_rank * gpus_per_node + local_rank
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(local_rank)
    model = DDP(build_model().cuda(local_rank), device_ids=[local_rank])
    x = torch.randn(8, 16, device=f"cuda:{local_rank}")
    model(x).sum().backward()
    dist.destroy_process_group()


def launch(build_model):
    gpus = torch.cuda.device_count()
    nodes = int(os.environ.get("NNODES", 1))
    node_rank = int(os.environ.get("NODE_RANK", 0))
    mp.spawn(worker, nprocs=gpus, args=(node_rank, gpus, gpus * nodes, build_model))
