"""Activation patching's metric as TransformerLens users write it (qkv.analysis.patch): its refusals (English)."""

MESSAGES = {
    "metric_type": (
        "the metric must be a function of the logits giving one number for each patched run, such as "
        "logit_diff(answer_id, wrong_id) or TransformerLens's lambda logits: logits[0, -1, a] - logits[0, -1, b]; "
        "got {got}"
    ),
    "metric_shape": (
        "the metric must give one number for each patched run: one for the whole batch of logits it is given "
        "(then it is called once per run, as TransformerLens calls it) or one per row ({B} for a batch of {B}); "
        "got {got}"
    ),
    "metric_value": "the metric must give a number (a float or a tensor of one); got {got}",
}
