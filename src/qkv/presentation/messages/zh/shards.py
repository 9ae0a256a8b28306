"""词元分片（与 en/shards.py 同键）：`qkv tokenize` 把放不进内存的语料写成磁盘上的词元编号
（qkv.core.text.prepare），`qkv train --data` 读取它们（qkv.core.text.shards、qkv.core.train.lm）。"""

MESSAGES = {
    # 进度条，以及 qkv tokenize 结束时的一行
    "bar_vocab": "正在统计词表",
    "bar_encode": "正在切分词元",
    "wrote": "已把 {tokens} 个词元（{dtype}，{shards} 个分片，{kind} 分词器，词表 {vocab} 个）写入 {out}，"
    "用时 {seconds} 秒（每秒 {rate} MB）",
    # qkv tokenize 拒绝的情况
    "no_txt": "{path} 里没有 .txt 文件",
    "empty": "{path} 里没有可切分的文本（只有空白，或什么都没有）",
    "tokenizer_kind": "不认识的分词器 {kind}：请给 char、word、bpe、一次 qkv 训练的目录或一个预训练模型",
    "char_vocab_size": "char 分词器不接受 --vocab-size：它的词表就是文本里出现的字符",
    "vocab_size_range": "{kind} 分词器的 --vocab-size 须在 {low} 到 {high} 之间，收到 {got}",
    "too_many_words": "文本里不同的词超过 {most} 个：请改用 --tokenizer bpe",
    "ref_vocab_size": "--vocab-size 只用于新训练的分词器；{ref} 自带分词器",
    "out_taken": "{path} 不是空的：请给一个新目录来存放词元数据",
    "shard_tokens": "每个分片至少要有 1 个词元，收到 {got}",
    # 数据目录（qkv train --data）拒绝的情况
    "missing": "数据目录 {path} 不存在",
    "not_data": "{path} 不是词元数据目录（没有 index.json）：请先用 qkv tokenize 生成",
    "bad_index": "无法读取 {path}：{reason}",
    "shard_missing": "缺少分片 {path}",
    "not_a_shard": "{path} 不是 qkv 的词元分片（文件头不对）",
    "version": "{path} 是第 {version} 版的词元分片；这个 qkv 只读第 {expected} 版",
    "id_size": "{path} 声称每个编号占 {size} 字节；分片里的编号只能占 2 或 4 字节",
    "truncated": "{path} 的长度不对：文件头说有 {count} 个编号（应为 {expected} 字节），文件却有 {size} 字节",
    "shard_differs": "{path} 与 {index} 对不上：请重新切分文本",
    "id_beyond": "{path} 里有编号 {id}，超出了模型的 {n} 行：请重新切分文本",
    "data_and_text": "--data 和 --text 都是训练文本的来源：只能给一个",
    "data_tokenizer": "--data 自带分词器（数据目录里的 tokenizer.json）：请去掉 {flags}",
}
