"""qkv 关于速通开关（spec/speedrun.py）的话，中文（与 en/speedrun.py 同样的键）。"""

MESSAGES = {
    "gpt2_value_embeds": "GPT-2 没有值嵌入（value_embeds，速通的开关）",
    "llama_value_embeds": "Llama 没有值嵌入（value_embeds，速通的开关）",
}
