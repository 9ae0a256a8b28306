"""What qkv says about the files it writes and the weights it reads as stored (the same keys as
zh/outputs.py): a write past the size the system allows a file (core/io/files.replacing leaves the old
file as it was), a config that says tied over a file that holds its own unembedding (core/hub/read.py),
and an empty attribution target (qkv.analysis.attribution)."""

MESSAGES = {
    "os_file_too_large": "File too large for this system (ulimit -f, or the file system's limit)",
    "head_untied": (
        "{path}: config.json says the unembedding is tied to the embedding (tie_word_embeddings), but the "
        "weights hold their own {head}, different from {embedding}: it is read as the unembedding, untied, "
        "as transformers reads it"
    ),
    "target_empty": "the target of the attribution must be a word (one token) or a token id, not empty",
    "no_folder": (
        "cannot write {path}: its folder {folder} does not exist (qkv does not"
        " make it): make the folder first, or choose another path"
    ),
    "folder_is_file": "cannot write {path}: {folder} is a file, not a folder",
}
