"""What a resume refuses (qkv.core.train.resume): a training log or an optimizer state that does not
belong to the checkpoint it continues. The same keys as zh/resume.py."""

MESSAGES = {
    "log_not_utf8": "{path} is not a qkv log: not UTF-8 (byte {byte})",
    "log_line": "{path} line {n} is not a qkv log line (a JSON object with an integer step)",
    "log_other_run": "{path} comes from another run: its train_loss at step {step} is {got}, state.json's is {want}",
    "data_field": (
        "{path}: field 'data' (where the training data came from: kind, path, sha256) is missing or malformed"
    ),
    "groups": "{path}: param_groups do not match the model's {n} parameter groups",
    "group_params": "{path}: param_groups[{n}] holds other parameters than the model's ({got} vs {want})",
    "group_setting": "{path}: param_groups[{n}].{key} = {value} does not fit this optimizer",
    "state_missing": (
        "{path}: the state of parameter {i} is missing ({n} of {total} parameters have none): "
        "its moments would restart from zero"
    ),
    "state_index": "{path}: state.{i} is for parameter {i}, but the model has {total}",
    "state_keys": "{path}: state.{i} holds {got}, AdamW's state is {want}",
    "state_tensor": "{path}: tensor state.{i}.{key} is {got}; the model's parameter {i} needs {want}",
    "state_values": "{path}: tensor state.{i}.{key} holds negative, NaN or infinite values",
    "state_step": "{path}: state.{i}.step counts {got} steps, the checkpoint is at step {step}",
}
