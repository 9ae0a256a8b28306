"""Where the computation runs: devices and float precision (device), CPU threads (threads), and
data-parallel training over several processes (processes)."""
