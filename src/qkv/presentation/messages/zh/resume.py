"""续训时拒绝的情况（qkv.core.train.resume）：不属于所续检查点的训练日志或优化器状态。与 en/resume.py 的键相同。"""

MESSAGES = {
    "log_not_utf8": "{path} 不是 qkv 的训练日志：它不是 UTF-8 编码（字节 {byte}）",
    "log_line": "{path} 的第 {n} 行不是 qkv 的日志行（应当是带整数 step 的 JSON 对象）",
    "log_other_run": "{path} 来自另一次训练：它在第 {step} 步记下的 train_loss 是 {got}，而 state.json 记下的是 {want}",
    "data_field": "{path}：字段 'data'（训练数据从哪里来：kind、path、sha256）缺失或格式不对",
    "groups": "{path}：param_groups 与模型的 {n} 个参数组对不上",
    "group_params": "{path}：param_groups[{n}] 里的参数与模型的不同（{got} 个对 {want} 个）",
    "group_setting": "{path}：param_groups[{n}].{key} = {value} 不适合这个优化器",
    "state_missing": "{path}：参数 {i} 的优化器状态缺失（{total} 个参数中有 {n} 个没有）：它的动量会从零重新开始",
    "state_index": "{path}：state.{i} 属于参数 {i}，但模型只有 {total} 个参数",
    "state_keys": "{path}：state.{i} 里有 {got}，而 AdamW 的状态是 {want}",
    "state_tensor": "{path}：张量 state.{i}.{key} 是 {got}；模型的参数 {i} 需要 {want}",
    "state_values": "{path}：张量 state.{i}.{key} 含有负数、NaN 或无穷大",
    "state_step": "{path}：state.{i}.step 记了 {got} 步，而检查点在第 {step} 步",
}
