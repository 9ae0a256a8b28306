"""Lesson "dropout": attention dropout in training and evaluation mode (English)."""

MESSAGES = {
    "title": "Attention dropout: in training the weights stop summing to 1 and z leaves the hull",
    "headline": "training mode (p = {p}): rows not summing to 1: {train_rows_failed}/{train_rows_checked} "
    "(worst {train_rows_worst:.3f}), z outside the hull: {train_hull_failed}/{train_hull_checked} "
    "(worst L1 distance {train_hull_worst:.3f}); evaluation mode: {eval_rows_failed} and {eval_hull_failed}",
    "text": "Training often applies dropout to the attention weights: each weight is set to 0 with probability p = {p} "
    "and the survivors are multiplied by 1/(1 − p). That keeps every weight's expected value, but nothing puts the "
    "row back to a sum of 1. In any one forward pass a row may add up to less or more than 1 "
    "(in this run the row sums range from {train_rows_min_sum:.3f} to {train_rows_max_sum:.3f}), so "
    "z = Σ a_j v_j is no longer a convex combination and is free to leave the hull of the values.\n\n"
    "The same weights (the bundled model's) run twice on “{text}” ({tokens} tokens); qkv.check tests "
    "every row and solves a linear program for every head and position:\n"
    "- training mode: {train_rows_failed} of {train_rows_checked} rows do not sum to 1 (worst deviation "
    "{train_rows_worst:.3f}); {train_hull_failed} of {train_hull_checked} z are outside the hull "
    "(worst L1 distance {train_hull_worst:.3f}).\n"
    "- evaluation mode: {eval_rows_failed} rows off and {eval_hull_failed} z outside.\n\n"
    "So “z lies in the hull” holds exactly at inference (evaluation mode); during training only the expected "
    "weights still add up to 1.",
    "eval_mode": "evaluation mode",
    "train_mode": "training mode, dropout p = {p}",
    "key": "key",
    "fig_title": "Layer {layer}, head {head}: each row's sum Σ is printed on the left",
    # why the lesson reads no other model family (said when it refuses one)
    "reads_why": "it rebuilds the model as a qkv GPT to switch attention dropout on",
}
