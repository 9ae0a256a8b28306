"""What an error says on the command line, in the user's language: a catalogued refusal from the
catalogue; what the system refused (an OSError with an errno: a file that is not there, a directory
given for a file, no permission, a full disk) from the catalogue's words for that errno (area "cli"),
with the path it names; a Rust library's panic (pyo3's PanicException, a BaseException: `is_panic`) as an
internal error in one line; any other error in its own words."""

from __future__ import annotations

import errno

from qkv.core.text.tokenizers.safety import is_panic, panic_line
from qkv.presentation.i18n import say_error, t

ERRNO = {
    errno.ENOENT: "cli.os_not_found",
    errno.EACCES: "cli.os_permission",
    errno.EPERM: "cli.os_permission",
    errno.EISDIR: "cli.os_is_directory",
    errno.ENOTDIR: "cli.os_not_directory",
    errno.ENOSPC: "cli.os_no_space",
    errno.EDQUOT: "cli.os_no_space",
    errno.EROFS: "cli.os_read_only",
    errno.EFBIG: "outputs.os_file_too_large",
    errno.EEXIST: "cli.os_exists",
    errno.ENOTEMPTY: "cli.os_not_empty",
    errno.ENAMETOOLONG: "cli.os_name_too_long",
    errno.EADDRINUSE: "cli.os_address_in_use",
    errno.EADDRNOTAVAIL: "cli.os_address_not_available",
}


def said(error: BaseException, lang: str) -> str:
    """`error` in `lang`, in one line (its first)."""
    key = ERRNO.get(getattr(error, "errno", None)) if isinstance(error, OSError) else None
    if is_panic(error):
        text = t("tokenizer_safety.library_panic", lang, detail=panic_line(error))
    elif key and not getattr(error, "key", None):
        text = t(key, lang)
        if error.filename is not None:
            text = t("cli.os_at", lang, error=text, path=repr(str(error.filename)))
    else:
        text = say_error(error, lang).strip()
    return text.splitlines()[0] if text else type(error).__name__


__all__ = ["ERRNO", "said", "is_panic"]
