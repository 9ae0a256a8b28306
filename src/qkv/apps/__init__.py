"""The apps layer: what a user runs — the command line, the web explorer, the lessons, the demo,
the figures (figure.py: loads a model and runs it for presentation's drawings).

Thin shells over the layers below; nothing below imports from here.
"""
