"""Data-parallel training: several processes, one model each, gradients averaged after every step.

torchrun (or `qkv train --nproc N`, which starts the processes the same way) gives each process
RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT. Every process builds the same model from
the same seed, draws the same global batch of B windows for step s (a generator seeded by
(seed, s)) and keeps its own B/N rows. DistributedDataParallel then averages the gradients:

    g = 1/N Σ_r ∇ mean(loss over rank r's B/N rows) = ∇ mean(loss over all B rows)

so one step is the same step whatever N is, and the loss curve is the same function of the step.
Only rank 0 writes the checkpoint, the log and the progress bar.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import overload

import torch
import torch.distributed as dist

from qkv.core.machine import threads

TIMEOUT_S = 120.0  # how long a collective waits for a peer, unless QKV_DDP_TIMEOUT says otherwise


def timeout_s() -> float:
    text = os.environ.get("QKV_DDP_TIMEOUT", "").strip()
    try:
        value = float(text) if text else TIMEOUT_S
    except ValueError:
        value = -1.0
    if not 0 < value < 1e6:
        raise ValueError(f"QKV_DDP_TIMEOUT must be a number of seconds > 0; got {text!r}")
    return value


class PeerLost(RuntimeError):
    """Another training process stopped or stopped answering."""


@dataclass(frozen=True)
class World:
    """Where this process stands: its rank among `size` processes (size 1: no other process)."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        """Whether this process writes (the checkpoint, the log, the progress bar)."""
        return self.rank == 0

    def shard(self, batch: torch.Tensor) -> torch.Tensor:
        """This rank's rows of a global batch: rows [rank·B/N, (rank+1)·B/N)."""
        if self.size == 1:
            return batch
        per = batch.shape[0] // self.size
        return batch[self.rank * per : (self.rank + 1) * per]  # (B/N, ...)

    def mean(self, value: torch.Tensor) -> float:
        """The mean of a scalar over all ranks (each rank's own loss → the global batch's loss)."""
        if self.size == 1:
            return value.item()
        total = value.detach().float().reshape(1).cpu()
        _collective(dist.all_reduce, total)
        return total.item() / self.size

    def total(self, value: float) -> float:
        """The sum of a float over all ranks."""
        if self.size == 1:
            return value
        t = torch.tensor([value], dtype=torch.float64)
        _collective(dist.all_reduce, t)
        return t.item()

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        """The model DDP trains (gradients averaged over ranks in backward); the model itself at size 1."""
        if self.size == 1:
            return model
        from torch.nn.parallel import DistributedDataParallel

        device = next(model.parameters()).device
        ids = [device.index] if device.type == "cuda" else None
        with warnings.catch_warnings():  # torch 2.13 renames the switch; the old name still does this
            warnings.simplefilter("ignore", FutureWarning)
            # the buffers (position tables, masks) are the same on every rank and never change:
            # nothing to broadcast before each forward
            return DistributedDataParallel(model, device_ids=ids, broadcast_buffers=False)

    def check_batch(self, batch_size: int) -> None:
        if batch_size % self.size:
            raise ValueError(
                f"batch_size={batch_size} does not divide among {self.size} processes; "
                f"the global batch is split evenly (choose a multiple of {self.size})"
            )


ALONE = World()  # this process, with no other


def current() -> World:
    """The world torchrun's environment describes (size 1 without torchrun), checked before anything
    uses it: a value that makes no sense is a one-line ValueError naming it, not a division by zero, a
    run that trains as a rank of no world, or c10d's pages of logs on the way to a peer that cannot be."""
    size = _whole("WORLD_SIZE", 1, low=1)
    if "RANK" in os.environ and "WORLD_SIZE" not in os.environ:
        raise ValueError(f"RANK={os.environ['RANK']} is set but WORLD_SIZE is not (torchrun sets both)")
    if size > 1 and "RANK" not in os.environ:
        raise ValueError(f"WORLD_SIZE={size} is set but RANK is not (torchrun sets both)")
    rank = _whole("RANK", 0, high=size - 1, of=f"WORLD_SIZE={size}")
    local_size = _whole("LOCAL_WORLD_SIZE", None, low=1)
    local_high = None if local_size is None else local_size - 1
    local_rank = _whole("LOCAL_RANK", 0, high=local_high, of=f"LOCAL_WORLD_SIZE={local_size}")
    if size > 1:  # where the processes meet, and how long they wait there
        for name in ("MASTER_ADDR", "MASTER_PORT"):
            if not os.environ.get(name, "").strip():
                raise ValueError(f"{name} is not set: the {size} processes meet at MASTER_ADDR:MASTER_PORT")
        _whole("MASTER_PORT", None, low=1, high=65535)
        timeout_s()
    return World(rank, size, local_rank)


# a whole number, or None only where the default is None (LOCAL_WORLD_SIZE, MASTER_PORT)
@overload
def _whole(name: str, default: int, low: int = 0, high: int | None = None, of: str = "") -> int: ...
@overload
def _whole(name: str, default: None, low: int = 0, high: int | None = None, of: str = "") -> int | None: ...
def _whole(name: str, default: int | None, low: int = 0, high: int | None = None, of: str = "") -> int | None:
    """The whole number from `low` to `high` in the environment variable `name` (`default` when it is
    unset); anything else is a ValueError that names both (`of`: where `high` comes from)."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < low or (high is not None and value > high):
        bounds = f"from {low} to {high}" + (f" ({of})" if of else "") if high is not None else f"of at least {low}"
        raise ValueError(f"{name}={text} in the environment must be a whole number {bounds}")
    return value


JOIN_MARGIN_S = 5.0  # how much longer than the timeout making the store may take before the process gives up


def join(device: torch.device | None = None) -> World:
    """Join the process group torchrun's environment describes (once): gloo on the CPU; on CUDA, NCCL
    for the gradients and gloo for the few CPU numbers (losses) the ranks share.

    The store where the ranks meet is made here, not by init_process_group's env://, to give its making
    a deadline: TCPStore's timeout bounds the connecting, not the wait for the store's first answer, and
    a server that accepts and never answers holds the constructor in C++ for good, where no exception
    reaches it. Past the timeout and a margin, the process says so in one line and ends."""
    world = current()
    if world.size > 1 and not dist.is_initialized():
        timeout = timeout_s()
        where = f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"

        def failed(reason: str) -> str:
            return (
                f"could not join the {world.size} training processes at {where} "
                f"(waited up to {timeout:.0f} s: {reason})"
            )

        cuda = device is not None and device.type == "cuda"
        if cuda:
            torch.cuda.set_device(device)
        try:
            with _deadline(timeout + JOIN_MARGIN_S, failed("no answer from the store"), world):
                store = _store(world, timeout)
            dist.init_process_group(
                "cpu:gloo,cuda:nccl" if cuda else "gloo",
                store=store,
                rank=world.rank,
                world_size=world.size,
                timeout=timedelta(seconds=timeout),
            )
        except (RuntimeError, ValueError) as e:  # DistStoreError and friends are RuntimeErrors
            raise PeerLost(failed(_first_line(e))) from None
    return world


def _store(world: World, timeout: float) -> dist.Store:
    """The TCPStore at MASTER_ADDR:MASTER_PORT as env:// makes it: served by rank 0, or by torchrun's
    agent where it says so (TORCHELASTIC_USE_AGENT_STORE); the process group's keys under "default_pg"."""
    agent = os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"
    store = dist.TCPStore(
        os.environ["MASTER_ADDR"],
        int(os.environ["MASTER_PORT"]),
        world.size,
        is_master=world.main and not agent,
        timeout=timedelta(seconds=timeout),
        multi_tenant=not agent,
    )
    return dist.PrefixStore("default_pg", store)


@contextmanager
def _deadline(seconds: float, message: str, world: World):
    """Within the block, a thread that ends the process after `seconds`, saying `message` as the qkv
    command says an error (one line, exit status 1): the one way out of a call that never returns."""
    timer = threading.Timer(seconds, _give_up, (message, world))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _give_up(message: str, world: World) -> None:
    print(f"qkv: error{'' if world.main else f' (rank {world.rank})'}: {message}", file=sys.stderr, flush=True)
    os._exit(1)


def gpu_for(world: World, device: torch.device) -> torch.device:
    """The GPU of this rank: cuda:LOCAL_RANK (one GPU per process on each machine)."""
    if world.size == 1 or device.type != "cuda":
        return device
    if device.index is not None:
        raise ValueError(
            f"with several processes each takes the GPU of its local rank; use --device cuda, not {device}"
        )
    if world.local_rank >= torch.cuda.device_count():
        raise ValueError(
            f"process {world.local_rank} of this machine has no GPU of its own "
            f"({torch.cuda.device_count()} GPU(s)); start at most that many processes per machine"
        )
    return torch.device("cuda", world.local_rank)


def leave() -> None:
    """Leave the process group; after a lost peer this may fail too, and the first error is the one to say."""
    if dist.is_initialized():
        try:
            dist.destroy_process_group()
        except (RuntimeError, ValueError):
            pass


def barrier(world: World) -> None:
    if world.size > 1:
        _collective(dist.barrier)


def _collective(fn, *args) -> None:
    try:
        fn(*args)
    except (RuntimeError, ValueError) as e:
        raise PeerLost(lost(e)) from None


def from_peers(e: RuntimeError) -> bool:
    """Whether an error came from the communication between ranks (gloo, NCCL), not from the model."""
    return isinstance(e, dist.DistError) or any(word in str(e) for word in ("gloo", "NCCL", "Connection reset"))


def lost(e: Exception) -> str:
    """What to say when a collective failed: a peer is gone (gloo's or NCCL's words in brackets)."""
    return f"another training process stopped or stopped answering ({_first_line(e)}); this one stops too"


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else type(e).__name__


# ---------------------------------------------------------------------------- the launcher


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(nproc: int, argv: list[str]) -> int:
    """Run `python -m qkv <argv>` in nproc processes on this machine, as `torchrun --standalone
    --nproc-per-node=nproc -m qkv <argv>` would (the same environment); the first failure stops the
    rest. Returns the exit status: 0, the failed rank's status, 130 after Ctrl-C or 143 after SIGTERM."""
    if not 1 <= nproc <= 256:
        raise ValueError(f"--nproc must be between 1 and 256; got {nproc}")
    base = {
        **os.environ,
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(free_port()),
        "WORLD_SIZE": str(nproc),
        "LOCAL_WORLD_SIZE": str(nproc),
        "GROUP_RANK": "0",
    }
    base.setdefault("OMP_NUM_THREADS", str(threads.per_process(nproc)))  # the cores, shared out
    base["QKV_LAUNCHED"] = "1"  # one machine, the same inputs: rank 0 alone reports an error in them
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "qkv", *argv],
            env={**base, "RANK": str(r), "LOCAL_RANK": str(r)},
            preexec_fn=_die_with_parent,
        )
        for r in range(nproc)
    ]
    before = signal.signal(signal.SIGTERM, _terminated)
    try:
        return _wait(procs)
    except KeyboardInterrupt:  # Ctrl-C reached every process: each stops, rank 0 saves first
        _stop(procs, grace=30)
        return 130
    except _Terminated:  # `kill`, a scheduler: passed on, and each rank stops as on Ctrl-C (rank 0 saves)
        for p in procs:  # SIGTERM, not SIGINT: a shell script's `&` job, and all it starts, ignore SIGINT
            p.terminate()
        _stop(procs, grace=30)
        return 143
    finally:
        signal.signal(signal.SIGTERM, before)


class _Terminated(Exception):
    pass


def _terminated(signum, frame):
    raise _Terminated


def _die_with_parent() -> None:
    """In each child (Linux): SIGTERM when the launcher dies, however it dies; no orphans keep training
    (SIGTERM stops a rank as Ctrl-C does: loop.run_loop)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def _wait(procs: list[subprocess.Popen]) -> int:
    """Wait for every process; when one fails, the others get a few seconds to notice (and say why),
    then SIGTERM: a peer waiting for the failed one would otherwise wait for the whole timeout."""
    while True:
        codes = [p.poll() for p in procs]
        failed = [c for c in codes if c is not None and c != 0]
        if failed:
            _stop(procs, grace=5)
            return failed[0] if failed[0] > 0 else 1  # killed by a signal: still a plain failure
        if all(c == 0 for c in codes):
            return 0
        time.sleep(0.1)


def _stop(procs: list[subprocess.Popen], grace: float) -> None:
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
