"""What every dashboard page shares: the page shell (nav, main, the style sheet), escaping, URLs.

Pages are plain HTML built with the standard library: every text from storage goes through `text`
(html.escape, quotes included, so it is safe in an attribute too) and every path segment through
`url` (percent-encoded, slashes included). No script: the pages work without JavaScript.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
from html import escape
from urllib.parse import quote, urlencode

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1b1b1b}
nav{background:#243447;padding:.5em 1em}nav a{color:#fff;margin-right:1.5em;text-decoration:none}
main{padding:1em}h1{font-size:1.4em;margin:.2em 0 .6em}h2{font-size:1.1em;margin:1.2em 0 .4em}
table{border-collapse:collapse}th,td{padding:2px 6px;text-align:left;border-bottom:1px solid #ddd}
td.num,th.num{text-align:right}tr.differs td{background:#fde2e1;font-weight:600}
#grid{font:12px/1.2 monospace}#grid td.cell,#grid td.none{padding:0;border:1px solid #fff;text-align:center;width:1.6em}
#grid td.cell a{display:block;color:#000;text-decoration:none;padding:2px 0}
#grid th.date{writing-mode:vertical-rl;font-weight:normal;padding:2px 0}
.s-MATCHED{background:#8fd19e}.s-MISMATCHED{background:#f08080}.s-RECEIVED{background:#9ec5fe}
.s-OVERDUE{background:#ffb347}.s-NOT_RECEIVED{background:#e2e3e5}
.counters span{display:inline-block;margin-right:1em;padding:2px 8px}
form#filters{margin:.5em 0 1em}form#filters label{margin-right:1em}
figure{margin:1em 0}figcaption{font-weight:600}code{background:#f3f3f3;padding:2px 4px}
.bar{fill:#4a78b5}.note{color:#555}
"""
# The pages carry no script and load nothing: the policy allows only this style sheet.
STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
SECURITY_HEADERS = {
    "Content-Security-Policy": f"default-src 'none'; style-src 'sha256-{STYLE_HASH}'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def text(value: object) -> str:
    """Any value as HTML text, safe in an element or in a quoted attribute."""
    return escape(str(value), quote=True)


def url(*segments: str, **query: str | None) -> str:
    """A dashboard path from its segments, each percent-encoded (a store_id may hold '/', '?', spaces)."""
    path = "/" + "/".join(quote(segment, safe="") for segment in segments)
    present = {name: value for name, value in query.items() if value}
    return path + ("?" + urlencode(present) if present else "")


def partner_url(partner_id: str) -> str:
    return url("partners", partner_id)


def store_day_url(partner_id: str, store_id: str, business_date: dt.date | str) -> str:
    return url("partners", partner_id, "stores", store_id, "days", str(business_date))


def when(moment: dt.datetime | None, never: str = "-") -> str:
    """A timestamp in an operator's words: UTC to the second, no microseconds (decision 0078)."""
    return never if moment is None else moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def table(table_id: str, headers: list[str], rows: list[str], empty: str = "none") -> str:
    """A table of already rendered `<tr>` rows; `empty` is said in its one row when there are none."""
    head = "".join(f"<th>{text(header)}</th>" for header in headers)
    body = "".join(rows) or f'<tr class="empty"><td colspan="{len(headers)}">{text(empty)}</td></tr>'
    return f'<table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def cells(*values: object) -> str:
    return "".join(f"<td>{text(value)}</td>" for value in values)


def page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{text(title)} · HQ dashboard</title><style>{STYLE}</style></head><body>"
        '<nav><a href="/">All partners</a><a href="/operations">Operations</a></nav>'
        f"<main>{body}</main></body></html>"
    )


def problem_page(status: int, message: str) -> str:
    titles = {400: "Bad request", 404: "Not found", 405: "Method not allowed", 503: "Storage unavailable"}
    title = titles.get(status, "Error")
    return page(title, f"<h1>{status} {text(title)}</h1><p>{text(message)}</p>")
