"""How each lesson is said and drawn, one module per lesson (qkv.apps.lessons measures them).

Every module reads the plain dict of numbers its lesson measured, `n`, and offers

    title(lang) -> str                the lesson's title, from the message area "lessons.<name>"
    text(n, lang) -> str              the explanation, from the same area
    headline(n, lang) -> str          one line with the key numbers
    figures(n, out, lang) -> [Path]   the figures, written into the folder `out`

It reads the numbers by their literal names (n["best"]["cue"]["mass"]), and looks its messages up by
literal keys (say("label_cue")): where a lesson names the items of one of its tuples (categories, kinds,
variants), a small function gives their words as a dict by those names (heads.labels(lang)), so every key
can be searched for from the catalogue, the measuring module and the tests alike.

Where the wording depends on what was measured (a verdict, a reason), the module picks the
message by the numbers; it never computes a number the text shows. A module whose figure draws
the model itself rather than numbers (embedding) sets DRAWS_MODEL, and its `figures` also takes
`model` and `tokenizer`.
"""
