import argparse
import os

from common.launch import start
from loading.loader import build_loaders


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=7)
    opts = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    start(local_rank)
    seeds = [opts.seed + offset for offset in range(8)]
    opts.seed = seeds[local_rank]
    for volume, mask in build_loaders(opts):
        print(volume.shape, mask.shape)


if __name__ == "__main__":
    main()
