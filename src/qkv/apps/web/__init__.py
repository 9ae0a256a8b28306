"""The explorer: a local web page that shows attention computing, served by qkv itself (server.py),
or written as one self-contained HTML file (export.py). Its documents: view.py and translation_view.py
(what the page shows of one text), model_doc.py (the model and the examples offered); inputs.py holds
what every request shares."""
