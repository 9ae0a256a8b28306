import pytest
import torch


@pytest.fixture(scope="session", autouse=True)
def single_thread():
    """Tiny models run fastest on one thread, and do not stall when the CPU cores are busy."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
