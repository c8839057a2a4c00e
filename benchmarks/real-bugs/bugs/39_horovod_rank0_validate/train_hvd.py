import horovod.torch as hvd
import torch
import torch.nn.functional as F


def metric_average(val, name):
    tensor = torch.tensor(val)
    avg_tensor = hvd.allreduce(tensor, name=name)
    return avg_tensor.item()


def validate(model, val_loader):
    model.eval()
    val_loss = 0.0
    with torch.no_grad():
        for data, target in val_loader:
            val_loss += F.cross_entropy(model(data.cuda()), target.cuda()).item()
    return metric_average(val_loss / len(val_loader), "avg_val_loss")


def main(model, train_loader, train_sampler, val_loader, epochs):
    hvd.init()
    torch.cuda.set_device(hvd.local_rank())
    model.cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01 * hvd.size())
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        for data, target in train_loader:
            optimizer.zero_grad()
            F.cross_entropy(model(data.cuda()), target.cuda()).backward()
            optimizer.step()
        if hvd.rank() == 0:
            print(f"epoch {epoch}: val loss {validate(model, val_loader):.4f}")
