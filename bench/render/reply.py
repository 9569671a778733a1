"""A long, realistic assistant reply in markdown, and its cut into model-sized tokens.

make_reply(chars) repeats varied sections (headings, prose with inline code/links/emphasis, nested
lists, task lists, tables, blockquotes, fenced code in several languages) until the text is about
`chars` long; tokenize(text, n) cuts it into n pieces at word/punctuation boundaries (~4 characters
each, like a BPE tokenizer's output), merging or splitting evenly to hit n exactly.
"""

from __future__ import annotations

import re

SECTIONS = [
    """## {n}. Understanding the problem

When you stream a response from a model, each **token** arrives separately and the UI has to decide
what to show. A naive approach re-renders everything, which costs `O(n²)` over the whole reply; see
[the CommonMark spec](https://spec.commonmark.org/0.31.2/) for why block structure makes this avoidable.
The key idea is that *most* of the document is already final, and only the last block can change.

""",
    """### Step {n}: configure the service

1. Install the dependencies with `pip install -r requirements.txt`.
2. Create a configuration file:
   - `DATABASE_URL` points at the primary database.
   - `CACHE_TTL` is in seconds; the default is `300`.
   - `LOG_LEVEL` may be `debug`, `info` or `warning`.
3. Run the migrations, then start the server.

> **Tip:** keep secrets out of the file and read them from the environment instead. This also makes
> it easier to rotate them without a deploy.

""",
    """```python
import asyncio
from dataclasses import dataclass


@dataclass
class Job{n}:
    name: str
    retries: int = 3

    async def run(self, session) -> dict:
        for attempt in range(self.retries):
            try:
                response = await session.get(f"/jobs/{{self.name}}")
                response.raise_for_status()
                return response.json()
            except TimeoutError:
                await asyncio.sleep(2 ** attempt)
        raise RuntimeError(f"{{self.name}} failed after {{self.retries}} attempts")
```

""",
    """| Option | Default | Description |
|---|:---:|---|
| `timeout` | 30 | Seconds before a request is abandoned |
| `retries` | 3 | Attempts for idempotent requests |
| `backoff` | 0.5 | Base delay, doubled on each retry |
| `verify_tls` | true | Check the server certificate |
| `pool_size` | 10 | Connections kept open per host |

""",
    """Here is the same logic in TypeScript, with a small helper for timeouts:

```typescript
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${{ms}} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  }} finally {{
    clearTimeout(timer);
  }}
}}
```

""",
    """#### Checklist {n}

- [x] Reproduce the bug locally
- [x] Add a failing test
- [ ] Fix the off-by-one in the pagination cursor
- [ ] Update the changelog

The root cause was that the cursor pointed *after* the last item instead of *at* it, so every page
skipped one row. With ~~offsets~~ cursors this matters because rows can be inserted between requests.

""",
    """```sql
SELECT o.id, o.created_at, c.email, SUM(i.price * i.quantity) AS total
FROM orders o
JOIN customers c ON c.id = o.customer_id
JOIN order_items i ON i.order_id = o.id
WHERE o.created_at >= NOW() - INTERVAL '30 days'
GROUP BY o.id, c.email
ORDER BY total DESC
LIMIT {n};
```

Run it with `EXPLAIN ANALYZE` first: if the plan shows a sequential scan on `order_items`, add an
index on `order_id`.

""",
    """```bash
#!/usr/bin/env bash
set -euo pipefail
for file in logs/*.log; do
  grep -c "ERROR" "$file" | xargs printf "%s: %d errors\\n" "$file"
done
```

""",
]


def make_reply(chars: int) -> str:
    parts = ["Sure — here is a complete walkthrough, with code and the trade-offs at each step.\n\n"]
    n = 0
    while sum(map(len, parts)) < chars:
        section = SECTIONS[n % len(SECTIONS)]
        n += 1
        parts.append(section.replace("{n}", str(n)).replace("{{", "{").replace("}}", "}"))
    return "".join(parts)


def tokenize(text: str, n: int) -> list[str]:
    pieces = re.findall(r" ?[A-Za-z]{1,6}|[A-Za-z]{1,6}| ?\d{1,3}|\s*\n|[ \t]+|[^\sA-Za-z\d]{1,2}", text)
    assert "".join(pieces) == text
    while len(pieces) > n:  # merge neighbours evenly
        step = max(2, len(pieces) // (len(pieces) - n))
        merged, i = [], 0
        while i < len(pieces):
            if len(pieces) - (i - len(merged)) > n and i % step == 0 and i + 1 < len(pieces):
                merged.append(pieces[i] + pieces[i + 1])
                i += 2
            else:
                merged.append(pieces[i])
                i += 1
            if len(merged) + (len(pieces) - i) == n:
                merged.extend(pieces[i:])
                break
        pieces = merged
    return pieces
