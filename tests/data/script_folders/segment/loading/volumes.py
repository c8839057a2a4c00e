import torch
from torch.utils.data import Dataset


class RandomVolumes(Dataset):
    def __init__(self, size):
        self.size = size

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return torch.rand(1, 16, 16, 16), torch.randint(0, 2, (16, 16, 16))
