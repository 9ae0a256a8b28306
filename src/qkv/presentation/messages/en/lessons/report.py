"""The report of all lessons (qkv demo: index.html, report.md) (English)."""

MESSAGES = {
    "title": "qkv lessons",
    "intro": "Each section is an experiment run just now; every number was measured by it.",
}
