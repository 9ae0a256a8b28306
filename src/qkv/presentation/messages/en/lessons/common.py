"""What several lessons say alike: how sentences and parts of a line are joined (English)."""

MESSAGES = {
    "then": "{first} {second}",
    "sep": "{first}; {second}",
    "comma": "{first}, {second}",
}
