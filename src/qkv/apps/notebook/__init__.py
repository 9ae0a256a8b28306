"""The explorer inline in a notebook: qkv.show (show.py: the page, its fallbacks and its size bound;
widget.py: the anywidget that shows it)."""
