"""A seeded random model is the same while another thread samples without a seed: both draw from the
process's global generator, one at a time (qkv.core.machine.rng)."""

from __future__ import annotations

import threading

import torch

import qkv
from qkv.analysis.transform import random_twin
from qkv.core.decode.sample import pick


def test_a_random_twin_is_the_same_while_another_thread_samples():
    model = qkv.GPT(qkv.ModelConfig(d_vocab=50, n_ctx=16, d_model=32, n_heads=2, n_layers=2))
    want = [p.detach().clone() for p in random_twin(model, 0).parameters()]
    stop = threading.Event()
    logits = torch.zeros(50)

    def sample():  # what a generation without a seed does, token after token
        while not stop.is_set():
            pick(logits, temperature=1.0)

    threads = [threading.Thread(target=sample) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for _ in range(20):
            got = [p.detach() for p in random_twin(model, 0).parameters()]
            assert all(torch.equal(a, b) for a, b in zip(got, want))
    finally:
        stop.set()
        for t in threads:
            t.join()
