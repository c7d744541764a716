"""Regenerate the demo batch files in this folder: ``python -m reviewer_app.demo.make_files [--keep-images]``.

The demo is small and fictional: 3 scenarios x 12 samples x 4 made-up models, with a multi-turn
conversation, two images drawn here with Pillow (a bar chart and a scanned-looking form), Markdown tables,
code blocks, one long answer (several screens) and one output that tries HTML/script injection. The output
files are committed; this script documents how they were made and is deterministic (``--keep-images`` leaves
the committed images alone: another Pillow version may draw other bytes).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFilter, ImageFont

HERE = Path(__file__).resolve().parent
MODELS = ("aurora-7b", "borealis-xl", "cirrus-mini", "dynamo-2")
INJECTION = (
    'Here is the answer. <script>alert("pwned")</script> <img src=x onerror="alert(1)"> '
    '<a href="javascript:alert(2)">click</a> <b>bold?</b> & done.'
)

SUPPORT = [
    (
        "How do I reset my password?",
        "Open Settings > Security, choose **Reset password** and follow the e-mailed link within 30 minutes.",
        "Passwords cannot be reset; create a new account.",
    ),
    (
        "Can I get a refund after 20 days?",
        "Yes: refunds are possible within **30 days** of purchase from Orders > Request refund.",
        "Refunds are only possible within 7 days.",
    ),
    (
        "My invoice shows the wrong company name.",
        "Edit the billing profile under Billing > Details; new invoices use "
        "the new name, and support can re-issue old ones.",
        "Invoices can never be changed.",
    ),
    (
        "How do I add a second user?",
        "Go to Team > Invite, enter their e-mail and pick a role; they get an invitation link.",
        "Share your password with the second user.",
    ),
    (
        "Why was my card declined?",
        "Usually the bank blocked it: check the card's expiry date and limit, then contact "
        "your bank; we never see the reason.",
        "Your account is banned.",
    ),
    (
        "Can I export my data?",
        "Yes: Settings > Data > Export creates a ZIP of CSV files, e-mailed when ready.",
        "Data export is not available.",
    ),
    (
        "How do I cancel my plan?",
        "Billing > Plan > Cancel; you keep access until the end of the paid period.",
        "Call us during office hours; cancellation is immediate and without refund.",
    ),
    (
        "The app is slow on my phone.",
        "Update to the latest version, clear the app cache, and check that low-power mode is off.",
        "Buy a new phone.",
    ),
    (
        "Do you offer a discount for schools?",
        "Yes, 50% for accredited schools: apply with the Education form.",
        "No discounts exist.",
    ),
    (
        "How do I change the language?",
        "Profile > Preferences > Language; the change applies after reload.",
        "Only English is supported.",
    ),
    (
        "Where is my order?",
        "Orders > Track shows the carrier's status; allow 3–5 working days.",
        "Orders are delivered the same day.",
    ),
]
CONVERSATION = [
    {"role": "system", "content": "You are the support assistant of a fictional bike shop."},
    {"role": "user", "content": "Hi, I bought a bike last week and the brakes squeak."},
    {"role": "assistant", "content": "Sorry to hear that! Is it the front brake, the rear one, or both?"},
    {"role": "user", "content": "Both, mostly when it rains. What should I do?"},
]
CONVERSATION_ANSWERS = (
    "Squeaking in the wet is common with new pads and usually fades after a few rides. Clean the rims (or discs) "
    "with water and a little dish soap, dry them, and check that the pads sit flat. If it persists after a week, "
    "bring the bike in: the first brake adjustment is free.",
    "Replace the whole brake system immediately; squeaking means it is about to fail.",
)

DATA = [
    ("Which quarter had the highest revenue in the chart?", "Q3 (about 41k)", "Q1", "chart"),
    ("What is the applicant's date of birth on the scanned form?", "14 March 1987", "1978", "form"),
    ("Total of 12, 7 and 30?", "49", "47", None),
    ("Convert 3.5 hours to minutes.", "210 minutes", "350 minutes", None),
    ("Average of 4, 8 and 12?", "8", "12", None),
    ("Percentage change from 80 to 100?", "+25%", "+20%", None),
    ("Median of 3, 9, 1, 7, 5?", "5", "9", None),
    ("How many days are in 6 weeks?", "42", "36", None),
    ("Share of 15 in 60?", "25%", "15%", None),
    ("Round 2.675 to one decimal.", "2.7", "2.6", None),
    ("Largest of 0.3, 1/4 and 0.29?", "0.3", "1/4", None),
    ("Sum of the first five odd numbers?", "25", "20", None),
]

CODE = [
    ("reverse a string", "def reverse(s: str) -> str:\n    return s[::-1]", "def reverse(s):\n    return s.sort()"),
    (
        "check if a number is even",
        "def is_even(n: int) -> bool:\n    return n % 2 == 0",
        "def is_even(n):\n    return n / 2 == 0",
    ),
    (
        "sum a list",
        "def total(xs: list[float]) -> float:\n    return sum(xs)",
        "def total(xs):\n    for x in xs:\n        return x",
    ),
    (
        "find the maximum of a list",
        'def biggest(xs):\n    if not xs:\n        raise ValueError("empty")\n    return max(xs)',
        "def biggest(xs):\n    return xs[0]",
    ),
    (
        "count words in a text",
        "def count_words(text: str) -> int:\n    return len(text.split())",
        "def count_words(text):\n    return len(text)",
    ),
    (
        "test whether a < b < c",
        "def ordered(a, b, c) -> bool:\n    return a < b < c",
        "def ordered(a, b, c):\n    return a < b or b < c",
    ),
    (
        "read a file's lines",
        'def lines(path):\n    with open(path, encoding="utf-8") as f:\n        return f.read().splitlines()',
        "def lines(path):\n    return open(path).read()",
    ),
    (
        "remove duplicates keeping order",
        "def unique(xs):\n    return list(dict.fromkeys(xs))",
        "def unique(xs):\n    return list(set(xs))",
    ),
    (
        "compute a factorial",
        "def fact(n: int) -> int:\n    out = 1\n    for k in range(2, n + 1):\n        out *= k\n    return out",
        "def fact(n):\n    return n * fact(n - 1)",
    ),
    (
        "capitalise each word",
        'def title(s: str) -> str:\n    return " ".join(w.capitalize() for w in s.split())',
        "def title(s):\n    return s.upper()",
    ),
    (
        "clamp a value to [lo, hi]",
        "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))",
        "def clamp(x, lo, hi):\n    return min(lo, max(x, hi))",
    ),
    (
        "join paths safely",
        "from pathlib import Path\n\ndef join(a, b):\n    return Path(a) / b",
        "def join(a, b):\n    return a + b",
    ),
]


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default()


def draw_chart(path: Path) -> None:
    img = Image.new("RGB", (640, 400), "white")
    d = ImageDraw.Draw(img)
    d.text((20, 12), "Quarterly revenue (thousands)", fill="black", font=_font(22))
    values = {"Q1": 28, "Q2": 35, "Q3": 41, "Q4": 33}
    d.line((60, 340, 610, 340), fill="black", width=2)
    d.line((60, 60, 60, 340), fill="black", width=2)
    for tick in range(0, 50, 10):
        y = 340 - tick * 6
        d.line((55, y, 610, y), fill="#dddddd")
        d.text((22, y - 8), str(tick), fill="black", font=_font(14))
    for i, (q, v) in enumerate(values.items()):
        x = 100 + i * 125
        d.rectangle((x, 340 - v * 6, x + 70, 340), fill="#4a78b5")
        d.text((x + 20, 348), q, fill="black", font=_font(16))
    img.save(path, optimize=True)


def draw_form(path: Path) -> None:
    img = Image.new("L", (620, 420), 238)
    d = ImageDraw.Draw(img)
    d.rectangle((20, 20, 600, 400), outline=60, width=3)
    d.text((40, 35), "MEMBERSHIP APPLICATION", fill=30, font=_font(24))
    fields = [
        ("Name", "Jordan Example"),
        ("Date of birth", "14 March 1987"),
        ("City", "Springfield"),
        ("Member no.", "A-20417"),
    ]
    for i, (label, value) in enumerate(fields):
        y = 100 + i * 70
        d.text((40, y), label + ":", fill=40, font=_font(18))
        d.line((210, y + 26, 570, y + 26), fill=90, width=1)
        d.text((220, y), value, fill=20, font=_font(20))
    img = img.rotate(1.2, expand=False, fillcolor=238).filter(ImageFilter.GaussianBlur(0.6))
    img.convert("RGB").save(path, optimize=True)


def _support_rows() -> list[dict[str, Any]]:
    rows = []
    criteria = "Correct policy, clear next step, friendly tone."
    samples: list[tuple[Any, str, str]] = [(CONVERSATION, *CONVERSATION_ANSWERS)]
    samples += [(q, good, bad) for q, good, bad in SUPPORT]
    for i, (prompt, good, bad) in enumerate(samples):
        outputs = {
            "aurora-7b": f"Thanks for asking! {good}",
            "borealis-xl": f"Great question. {good}\n\nIn more detail:\n\n1. Open the app.\n2. Follow the steps "
            "above.\n3. Contact us if anything is unclear.\n\nHave a wonderful day!",
            "cirrus-mini": good.split(";")[0].split(":")[0] + ".",
            "dynamo-2": bad,
        }
        for model in MODELS:
            rows.append(
                {
                    "sample_id": f"support-{i + 1:02d}",
                    "scenario": "support",
                    "prompt": prompt,
                    "model": model,
                    "output": outputs[model],
                    "criteria": criteria,
                    "reference": good,
                }
            )
    return rows


def _data_rows() -> list[dict[str, Any]]:
    rows = []
    for i, (question, right, wrong, image) in enumerate(DATA):
        sid = f"data-{i + 1:02d}"
        table = f"| Question | Answer |\n|---|---|\n| {question} | **{right}** |"
        outputs = {
            "aurora-7b": f"The answer is **{right}**.\n\n{table}",
            "borealis-xl": f"Let me work through it step by step.\n\n{table}\n\nSo the result is {right}.",
            "cirrus-mini": right,
            "dynamo-2": INJECTION if i == 2 else f"I believe it is {wrong}, costing $5 and $10 at most.",
        }
        for model in MODELS:
            rec: dict[str, Any] = {
                "sample_id": sid,
                "scenario": "data",
                "prompt": question,
                "model": model,
                "output": outputs[model],
                "reference": right,
                "criteria": "The number must be right; a table is welcome.",
            }
            if image:
                rec["images"] = [f"images/{image}.png"]
            rows.append(rec)
    return rows


def long_answer(task: str, good: str) -> str:
    """A several-screen answer (about 10,000 characters): real outputs are often this long, and the review
    page must keep the judgement in reach while one scrolls."""
    cases = [
        ("an empty string", '""', '""'),
        ("one character", '"a"', '"a"'),
        ("a palindrome", '"level"', '"level"'),
        ("spaces inside", '"a b c"', '"c b a"'),
        ("accented letters", '"café"', '"éfac"'),
        ("digits", '"12345"', '"54321"'),
        ("punctuation", '"hi, you!"', '"!uoy ,ih"'),
        ("a newline", '"a\\nb"', '"b\\na"'),
        ("mixed case", '"AbC"', '"CbA"'),
        ("repeated letters", '"aaab"', '"baaa"'),
        ("a long word", '"internationalisation"', '"noitasilanoitanretni"'),
        ("two words", '"hello world"', '"dlrow olleh"'),
    ]
    parts = [
        f"# How to {task}, step by step\n\nThis answer explains the idea, shows a first version, tests it, "
        "looks at the corner cases one by one, compares alternatives and ends with a checklist. Skip to the "
        "end for the short version.\n",
        f"## The short version\n\n```python\n{good}\n```\n",
    ]
    for n, (what, given, expected) in enumerate(cases, start=1):
        parts.append(
            f"## Case {n}: {what}\n\nWhen the input is {what}, the function should still behave. Given "
            f"`{given}`, we expect `{expected}`. Slicing with a step of -1 walks the sequence from its last "
            "element to its first and builds a new string, so the original is never changed and no loop is "
            "needed. It works the same for every length, including zero, because a slice of an empty string is "
            "an empty string.\n\n"
            f"```python\nassert reverse({given}) == {expected}\n```\n\n"
            "A common mistake here is to call a list method on the string: strings are immutable, so methods "
            "such as `sort` or `reverse` do not exist on them, and `sorted` would reorder the characters "
            "instead of reversing them. Another is to build the result with `+=` in a loop, which is correct "
            "but slower for long inputs, since each step copies the partial result.\n"
        )
    parts.append(
        "## Alternatives compared\n\n| approach | reads well | speed | notes |\n|---|---|---|---|\n"
        "| `s[::-1]` | yes | fastest | the idiom |\n| `''.join(reversed(s))` | yes | fast | works on any iterable |\n"
        "| loop with `+=` | so-so | slow on long input | copies each step |\n"
        "| recursion | no | slow, limited depth | fails past about 1,000 characters |\n"
    )
    parts.append(
        "## A loop version, for teaching\n\n```python\ndef reverse_loop(s: str) -> str:\n    out = []\n"
        '    for ch in s:\n        out.insert(0, ch)\n    return "".join(out)\n```\n\nIt is easy to follow '
        "but quadratic: `insert(0, ...)` shifts every element each time. Use it to explain the idea, not in "
        "production code.\n"
    )
    parts.append(
        "## Unicode note\n\nReversing code points can split a character made of several code points, such as "
        "a letter followed by a combining accent, or an emoji with a skin-tone modifier. If your text may "
        "contain those, reverse grapheme clusters instead (a third-party package can split them); for "
        "plain text the slice is right.\n"
    )
    parts.append(
        "## Checklist\n\n- [x] returns a new string\n- [x] handles the empty string\n- [x] keeps spaces and "
        "digits\n- [ ] combining characters need grapheme clusters\n\nThat is all: the slice is the answer.\n"
    )
    return "\n".join(parts)


def _code_rows() -> list[dict[str, Any]]:
    rows = []
    for i, (task, good, bad) in enumerate(CODE):
        outputs = {
            "aurora-7b": f"```python\n{good}\n```",
            "borealis-xl": long_answer(task, good)
            if i == 0
            else f"Here is a function to {task}:\n\n```python\n{good}\n```\n\nIt handles the usual cases; "
            "use `help()` to read more.",
            "cirrus-mini": f"`{good.splitlines()[-1].strip()}`",
            "dynamo-2": f"```python\n{bad}\n```",
        }
        for model in MODELS:
            rows.append(
                {
                    "sample_id": f"code-{i + 1:02d}",
                    "scenario": "code",
                    "prompt": f"Write a Python function to {task}.",
                    "model": model,
                    "output": outputs[model],
                    "criteria": "Correct, idiomatic, runs as written.",
                }
            )
    return rows


def version_two(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The demo's follow-up round: the same samples answered by the next versions of the same models (loaded
    as `demo-v2`, a follow-up of `demo`). dynamo-2 now answers support questions well, cirrus-mini now gets the
    data questions wrong; every other output is the same text as before, so the comparison shows an
    improvement, a regression and "no change" at once, and drift shows identical outputs."""
    support = {question: good for question, good, _bad in SUPPORT}  # the conversation sample stays as it was
    wrong = {question: bad for question, _right, bad, _image in DATA}
    out = []
    for r in rows:
        r = dict(r)
        if r["model"] == "dynamo-2" and r["scenario"] == "support" and isinstance(r["prompt"], str):
            r["output"] = f"Sure. {support[r['prompt']]}"
        if r["model"] == "cirrus-mini" and r["scenario"] == "data":
            r["output"] = f"I think it is {wrong[r['prompt']]}."
        out.append(r)
    return out


def main() -> None:
    (HERE / "images").mkdir(exist_ok=True)
    if "--keep-images" not in sys.argv:  # Pillow versions may draw other bytes: keep the committed ones
        draw_chart(HERE / "images" / "chart.png")
        draw_form(HERE / "images" / "form.png")
    rows = _support_rows() + _data_rows() + _code_rows()
    (HERE / "demo.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    (HERE / "demo_v2.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in version_two(rows)), encoding="utf-8"
    )
    pairwise = [r for r in rows if r["scenario"] == "support" and r["model"] != "borealis-xl"]
    (HERE / "demo_pairwise.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in pairwise), encoding="utf-8"
    )


if __name__ == "__main__":
    main()
