"""How qkv shows byte tokens among the next-token candidates (presentation/byte_tokens.py), in
English (the same keys as zh/segment.py)."""

MESSAGES = {
    "byte_cell": "{tok} (byte: {role})",
    "role_ascii": "a whole ASCII character",
    "role_cont": "continues a character",
    "role_lead2": "starts a 2-byte character",
    "role_lead3": "starts a 3-byte character",
    "role_lead4": "starts a 4-byte character",
    "role_bad": "never found in UTF-8 text",
    "bytes_why": (
        "A token written like {tok} is one UTF-8 byte, not a character: the model spells a character it "
        "has no token for byte by byte (a Chinese character takes three). A byte that starts a character "
        "stands for every character the model could spell from it, so its probability is theirs together; "
        "the bytes after it decide which character it becomes."
    ),
    "unknown_line": "note: {text} is not a word the model learned: read as {pieces} {how}; nearest words: {nearest}",
    "unknown_far": "note: {text} is not a word the model learned: read as {pieces} {how}; no word it knows is close",
    "unknown_chars": "(single characters)",
    "unknown_bytes": "(UTF-8 bytes: even its characters are unknown)",
}
