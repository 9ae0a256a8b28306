"""Training: a run from request to loop (run), the loop itself (loop), the two tasks (lm, translate),
checkpoints (checkpoint), what a resume checks (resume), and who owns a run directory (lock, rundir)."""
