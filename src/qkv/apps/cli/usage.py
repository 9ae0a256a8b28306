"""argparse in the user's language: the usage errors it makes (a value of the wrong type, a choice it
does not offer, a required argument left out, an argument it does not know) are said from the
catalogue (area "cli") in one line, `qkv: error: ... (see qkv CMD --help)` or its Chinese.

The invalid value and the invalid choice are made here (_get_value, _check_value); the other errors
argparse writes itself, in its own English words, and they are recognised by those words (USAGE) and
said again from the catalogue. A message not recognised stays as argparse wrote it. The help texts
(--help) stay English.
"""

from __future__ import annotations

import argparse
import re

from qkv.presentation.i18n import DEFAULT_LANG, say_error, t

# argparse's own words for the errors it makes itself, and the catalogue key that says each
USAGE = [
    (re.compile(r"the following arguments are required: (?P<names>.+)"), "cli.required"),
    (re.compile(r"unrecognized arguments: (?P<args>.+)"), "cli.unrecognized"),
    (re.compile(r"ambiguous option: (?P<option>\S+) could match (?P<matches>.+)"), "cli.ambiguous"),
    (re.compile(r"expected one argument"), "cli.expected_one"),
    (re.compile(r"expected at most one argument"), "cli.expected_at_most_one"),
    (re.compile(r"expected at least one argument"), "cli.expected_at_least_one"),
    (re.compile(r"ignored explicit argument (?P<value>.+)"), "cli.explicit_ignored"),
]
ARGUMENT = re.compile(r"argument (?P<name>\S+?): (?P<message>.+)", re.S)


class TypeRefusal(argparse.ArgumentTypeError):
    """A type function's refusal (a --seed out of range) with its catalogue key, said in the user's language."""

    key: str | None = None
    fields: dict = {}

    @classmethod
    def of(cls, key: str, /, **fields):
        error = cls(t(key, DEFAULT_LANG, **fields))
        error.key, error.fields = key, fields
        return error


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line in `lang` (its subparsers are made with the same)."""

    def __init__(self, *args, lang: str = DEFAULT_LANG, **kwargs):
        kwargs.setdefault("exit_on_error", False)  # an ArgumentError comes to parse_known_args, whole
        super().__init__(*args, **kwargs)
        self.lang = lang

    def add_subparsers(self, **kwargs):
        kwargs.setdefault("parser_class", lambda **kw: Parser(lang=self.lang, **kw))
        return super().add_subparsers(**kwargs)

    def parse_known_args(self, args=None, namespace=None):
        try:
            return super().parse_known_args(args, namespace)
        except argparse.ArgumentError as e:  # the argument's name and argparse's words, apart
            said = self.said(e.message)
            self.error(said if e.argument_name is None else self.say("argument", name=e.argument_name, message=said))

    def error(self, message):
        match = ARGUMENT.fullmatch(message)  # as a Python whose argparse raises no ArgumentError writes it
        if match:
            message = self.say("argument", name=match["name"], message=self.said(match["message"]))
        self.exit(2, self.say("usage", message=self.said(message), prog=self.prog) + "\n")

    def said(self, message: str) -> str:
        """argparse's own words for an error it made, said from the catalogue; other text as it is."""
        for pattern, key in USAGE:
            match = pattern.fullmatch(message)
            if match:
                return t(key, self.lang, **match.groupdict())
        return message

    def say(self, key: str, /, **fields) -> str:
        return t(f"cli.{key}", self.lang, **fields)

    def _get_value(self, action, arg_string):
        convert = self._registry_get("type", action.type, action.type)
        if not callable(convert):
            return super()._get_value(action, arg_string)
        try:
            return convert(arg_string)
        except argparse.ArgumentTypeError as e:  # the type function's own words (a TypeRefusal: from the catalogue)
            raise argparse.ArgumentError(action, say_error(e, self.lang)) from None
        except (TypeError, ValueError):
            name = getattr(action.type, "__name__", repr(action.type))
            try:
                kind = self.say(f"type_{name}")
            except KeyError:
                kind = name
            raise argparse.ArgumentError(action, self.say("invalid_value", type=kind, value=repr(arg_string))) from None

    def _check_value(self, action, value):
        if action.choices is not None and value not in action.choices:
            choices = t("errors.comma", self.lang).join(map(repr, action.choices))
            raise argparse.ArgumentError(action, self.say("invalid_choice", value=repr(value), choices=choices))
