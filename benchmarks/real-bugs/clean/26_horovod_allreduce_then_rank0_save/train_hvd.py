import horovod.torch as hvd
import torch
import torch.nn.functional as F


def train(model, loader, sampler, val_loader, epochs):
    hvd.init()
    torch.cuda.set_device(hvd.local_rank())
    model.cuda()
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01 * hvd.size()), named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            val = sum(F.cross_entropy(model(x.cuda()), y.cuda()).item() for x, y in val_loader) / len(val_loader)
        val = hvd.allreduce(torch.tensor(val), name="val_loss").item()
        model.train()
        if hvd.rank() == 0:
            print(f"epoch {epoch}: val {val:.4f}")
            torch.save(model.state_dict(), f"checkpoint-{epoch}.pt")
