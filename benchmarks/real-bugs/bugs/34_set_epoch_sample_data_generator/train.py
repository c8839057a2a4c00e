import torch
from torch.utils import data
from torch.nn.parallel import DistributedDataParallel as DDP


def data_sampler(dataset, shuffle, distributed):
    if distributed:
        return data.distributed.DistributedSampler(dataset, shuffle=shuffle)
    if shuffle:
        return data.RandomSampler(dataset)
    return data.SequentialSampler(dataset)


def sample_data(loader):
    while True:
        for batch in loader:
            yield batch


def train(args, generator, discriminator, g_optim, d_optim, dataset, d_loss_fn, device):
    loader = data.DataLoader(
        dataset,
        batch_size=args.batch,
        sampler=data_sampler(dataset, shuffle=True, distributed=args.distributed),
        drop_last=True,
    )
    if args.distributed:
        discriminator = DDP(discriminator, device_ids=[args.local_rank], broadcast_buffers=False)
    loader = sample_data(loader)
    for idx in range(args.start_iter, args.iter):
        real_img = next(loader).to(device)
        noise = torch.randn(args.batch, args.latent, device=device)
        fake_img, _ = generator([noise])
        d_loss = d_loss_fn(discriminator(fake_img), discriminator(real_img))
        discriminator.zero_grad()
        d_loss.backward()
        d_optim.step()
