"""How Azure Functions Core Tools reads `.funcignore`, for the package and infra tests (one port of it)."""

from __future__ import annotations

import re


class CoreToolsIgnore:
    """.funcignore as Azure Functions Core Tools applies it (Common/GitIgnoreParser.cs, a port of the
    npm gitignore-parser): each pattern is a regular expression anchored at the start of the path
    relative to the project root, and matching a prefix of it; `**` is any text, `*` one or more
    characters other than `/`, every other character literal (`?` too). A path is left out when a
    pattern matches it and no `!pattern` does, whatever their order."""

    def __init__(self, text: str) -> None:
        positive, negative = [], []
        for line in (line.strip() for line in text.split("\n")):
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            line = line.removeprefix("!").removeprefix("/")
            (negative if negated else positive).append(line)
        self.negative_patterns = negative
        self._positive = self._compile(positive)
        self._negative = self._compile(negative)

    @staticmethod
    def _regex(pattern: str) -> str:
        escaped = re.sub(r"[\-\[\]/{}()+?.\\^$|]", lambda found: "\\" + found.group(0), pattern)
        return escaped.replace("**", "(.+)").replace("*", "([^\\/]+)")

    def _compile(self, patterns: list[str]) -> re.Pattern:
        if not patterns:
            return re.compile("$^")
        return re.compile("^((" + ")|(".join(self._regex(pattern) for pattern in sorted(patterns)) + "))")

    def denies(self, path: str) -> bool:
        return bool(self._positive.match(path)) and not self._negative.match(path)

    def accepts(self, path: str) -> bool:
        return not self.denies(path)
