def reshuffle(sampler, epoch):
    sampler.set_epoch(epoch)
