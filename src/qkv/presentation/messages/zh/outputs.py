"""qkv 写文件、按原样读权重时要说的话（与 en/outputs.py 的键相同）：写入的文件超过系统允许的大小
（core/io/files.replacing 会让原来的文件保持原样）；config 说输出层与词嵌入共享，文件里却另存了输出层
（core/hub/read.py）；归因的目标为空（qkv.analysis.attribution）。"""

MESSAGES = {
    "os_file_too_large": "文件超过了系统允许的大小（ulimit -f，或文件系统的上限）",
    "head_untied": (
        "{path}：config.json 说输出层与词嵌入共用一个矩阵（tie_word_embeddings），但权重文件里另存了自己的 "
        "{head}，和 {embedding} 不同：按 transformers 的做法，把它作为独立的输出层读入，不再共用"
    ),
    "target_empty": "归因的目标必须是一个词（一个词元）或一个词元编号，不能为空",
    "no_folder": "无法写入 {path}：文件夹 {folder} 不存在（qkv 不会替你建它）：请先建好这个文件夹，或者换一个路径",
    "folder_is_file": "无法写入 {path}：{folder} 是一个文件，不是文件夹",
}
