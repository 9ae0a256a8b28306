"""网页服务器拒绝一个请求时的中文说法（与 en/requests.py 同样的键）。

用在 {"error": ..., "status": ...} 回答里（qkv.apps.web.requests）。v_* 对应 pydantic 的各种错误
类型，{字段} 是 pydantic 给出的数字；json_* 对应 Python json 模块的报错。{where} 指出请求体里出错
的地方（"text"、"heads.0"、"query.limit"），是字段名，原样照写。位置从 0 开始数，写作“位置 N”。
"""

MESSAGES = {
    # ------------------------------------------------------------------ HTTP
    "http_404": "找不到这个地址（Not Found）",
    "http_405": "这个地址不接受这种请求方法（Method Not Allowed）",
    "too_large": "请求体超过了这个接口能接受的 {limit:,} 字节",
    "wrong_host": "这个服务器只接受发往 {hosts} 的请求",
    "no_asset": "没有名为 {name} 的页面文件",
    "internal": "内部错误（这是 qkv 自身的缺陷，欢迎报告）：{kind}: {detail}",
    "bad_request": "请求有误",
    # ------------------------------------------------------------------ 请求体
    "no_body": "请求没有请求体：请发送一个 JSON 对象",
    "not_object": "请求体必须是一个 JSON 对象（并带上 Content-Type: application/json）",
    "not_json": "请求体不是合法的 JSON（位置 {at}：{why}）",
    "json_value": "这里应该是一个值",
    "json_name": "属性名应该用双引号括起来",
    "json_comma": "这里缺少分隔符 ','",
    "json_colon": "这里缺少分隔符 ':'",
    "json_extra": "JSON 结束之后还有多余的内容",
    "json_string": "字符串没有结束（少了右边的引号）",
    "json_control": "字符串里有不允许出现的控制字符",
    "text_or_ids": "text 和 ids 请二选一：只给其中一个",
    "at": "{where}：{error}",
    "either": "{first} 或 {last}",
    # ------------------------------------------------------------------ 字段的值（pydantic 的错误类型）
    "v_missing": "缺少这个字段",
    "v_extra_forbidden": "不认识这个字段（请求体里不能有多余的字段）",
    "v_string_type": "应该是字符串",
    "v_int_type": "应该是整数",
    "v_int_parsing": "应该是整数，而这个字符串读不成整数",
    "v_float_type": "应该是数字",
    "v_float_parsing": "应该是数字，而这个字符串读不成数字",
    "v_finite_number": "应该是有限的数（不能是 NaN 或无穷大）",
    "v_bool_type": "应该是布尔值（true 或 false）",
    "v_list_type": "应该是列表",
    "v_dict_type": "应该是 JSON 对象",
    "v_model_attributes_type": "应该是 JSON 对象",
    "v_string_too_long": "字符串最多只能有 {max_length} 个字符",
    "v_too_long": "{field_type} 最多只能有 {max_length} 项，实际有 {actual_length} 项",
    "v_too_short": "{field_type} 至少要有 {min_length} 项，实际只有 {actual_length} 项",
    "v_greater_than_equal": "应该大于或等于 {ge}",
    "v_less_than_equal": "应该小于或等于 {le}",
    "v_greater_than": "应该大于 {gt}",
    "v_less_than": "应该小于 {lt}",
    "v_string_pattern_mismatch": "字符串应该符合模式 '{pattern}'",
    "v_literal_error": "只能是 {expected}",
}
