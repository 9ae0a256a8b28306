"""What several lessons say alike: how sentences and parts of a line are joined (Chinese)."""

MESSAGES = {
    "then": "{first}{second}",
    "sep": "{first}；{second}",
    "comma": "{first}，{second}",
}
