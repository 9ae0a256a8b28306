"""How each lesson is said and drawn, one module per lesson (qkv.apps.lessons measures them).

Every module reads the plain dict of numbers its lesson measured, `n`, and offers

    text(n, lang) -> str              the explanation, from the message area "lessons.<name>"
    headline(n, lang) -> str          one line with the key numbers
    figures(n, out, lang) -> [Path]   the figures, written into the folder `out`

Where the wording depends on what was measured (a verdict, a reason), the module picks the
message by the numbers; it never computes a number the text shows. A module whose figure draws
the model itself rather than numbers (embedding) sets DRAWS_MODEL, and its `figures` also takes
`model` and `tokenizer`.
"""
