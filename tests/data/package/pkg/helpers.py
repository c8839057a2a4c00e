def start_epoch(sampler, epoch):
    sampler.set_epoch(epoch)
