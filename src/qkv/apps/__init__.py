"""The apps layer: what a user runs — the command line, the web explorer, the lessons, the demo.

Thin shells over the layers below; nothing below imports from here.
"""
