"""The translator's honesty mark: words of a translation that translate no word of the source (English)."""

MESSAGES = {
    # qkv translate's note (on stderr, after the translation) and the rule it follows
    "note_invented": "{n} word(s) of the translation translate no word of the sentence (invented): {words}",
    "note_unglossed": "the word list knows no English for {words}: a marked word may translate it",
    "rule": "rule: a content word (not a, the, of, he, is …) is marked invented when no word of the source "
    "yields it in qkv's word list (the HSK dictionary glosses and the pairs the model trained on), compared by stem; "
    "a check against a word list, not a proof: a right word the list lacks is marked, a wrong word some source word "
    "yields elsewhere is not",
    "word": "“{word}”",
}
