"""qkv 怎样在下一个词元的候选里显示字节词元（presentation/byte_tokens.py），中文（与 en/segment.py 键相同）。"""

MESSAGES = {
    "byte_cell": "{tok}（字节：{role}）",
    "role_ascii": "一个完整的 ASCII 字符",
    "role_cont": "接在一个字的中间",
    "role_lead2": "开始一个两字节的字",
    "role_lead3": "开始一个三字节的字",
    "role_lead4": "开始一个四字节的字",
    "role_bad": "UTF-8 文本里不会出现",
    "bytes_why": (
        "写成 {tok} 这样的词元是一个 UTF-8 字节，不是一个字：词表里没有的字，模型一个字节一个字节地拼出来"
        "（一个汉字要三个字节）。开头的字节代表模型能从它拼出的所有字，所以它的概率是这些字合起来的概率；"
        "后面的字节才决定拼成哪个字。"
    ),
    "unknown_line": "注意：{text} 不是模型学过的词：读成 {pieces} {how}；最接近的词：{nearest}",
    "unknown_far": "注意：{text} 不是模型学过的词：读成 {pieces} {how}；模型认识的词里没有相近的",
    "unknown_chars": "（逐个字）",
    "unknown_bytes": "（UTF-8 字节：连其中的字也不认识）",
}
