import os

import torch
import torch.distributed as dist

from loading.loader import build_loaders


class Options:
    seed = 0


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    opts = Options()
    opts.seed = 1234
    for images, labels in build_loaders(opts):
        print(images.shape, labels.shape)


if __name__ == "__main__":
    main()
