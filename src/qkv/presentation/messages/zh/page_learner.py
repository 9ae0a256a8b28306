"""网页面向学习者的补充（qkv.apps.web）：注意力头实测的角色等
（中文，与 en/page_learner.py 同键）。"""

MESSAGES = {
    "role_short_cue": "线索动词",
    "role_short_previous": "前一个",
    "role_short_start": "句首",
    "role_short_self": "自己",
    "role_label_cue": "决定词义的那个动词",
    "role_label_previous": "紧挨在前面的词元",
    "role_label_start": "第一个词元（位置 0）",
    "role_label_self": "它自己所在的位置",
    "roles_family": "角色是在 GPT 读词义句子时测出来的：这个模型不是 GPT",
    "roles_probes": "这个模型的分词器写不出测量角色用的词义句子",
}
