"""The explorer: a local web page that shows attention computing, served by qkv itself (server.py),
or written as one self-contained HTML file (export.py)."""
