"""The presentation layer: how a result is shown — text, Markdown, LaTeX, figures — in Chinese or
English, from one message catalogue (i18n). Imports only qkv.core and qkv.analysis.
"""
