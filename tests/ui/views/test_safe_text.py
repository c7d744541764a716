"""The renderer's policy, as pure functions: what untrusted Markdown may become, and how a short string is
made literal for one of Streamlit's Markdown places."""

from __future__ import annotations

import re

import pytest

from reviewer_app.ui.components.safe_text import WORD_JOINER, markdown_literal, raw_html, to_html

X = "http://outside.invalid"


@pytest.mark.parametrize(
    "text",
    [
        f"`![p]({X}/1.png)`",
        f"~~~\n![p]({X}/2.png)\n~~~",
        f"```\n![p]({X}/3.png)",
        f"![p]({X}/4.png)",
        f'<img src="{X}/5.png">',
        f"[![p]({X}/6.png)]({X}/)",
        f"![p][r]\n\n[r]: {X}/7.png",
        f'<video src="{X}/8.mp4"></video><audio src="{X}/9.mp3"></audio><iframe src="{X}/"></iframe>',
        f'<link rel="stylesheet" href="{X}/s.css"><style>@import url({X}/i.css);</style>',
        f"<{X}/autolink.png>",
    ],
)
def test_nothing_in_the_html_can_load_anything(text: str) -> None:
    out = to_html(text)
    assert set(re.findall(r"</?([a-z0-9]+)", out)) <= {"div", "p", "pre", "code", "span", "a"}
    assert not re.search(r"<[^>]*\s(src|srcset|style|on\w+)=", out)  # raw HTML arrives as escaped text
    assert f'href="{X}' not in out or 'rel="noopener noreferrer nofollow"' in out


def test_text_is_shown_as_its_author_wrote_it() -> None:
    out = to_html("Costs $5 vs $10 :red[red] :material/home: :smile:\n\n    <b>indented</b>\n")
    assert "Costs $5 vs $10 :red[red] :material/home: :smile:" in out
    assert "<pre><code>&lt;b&gt;indented&lt;/b&gt;\n</code></pre>" in out
    assert "<table>" in to_html("| a | b |\n|---|---|\n| 1 | 2 |") and "<s>gone</s>" in to_html("~~gone~~")
    assert to_html("www.example.com and http://example.com") == (
        '<div class="br-md"><p>www.example.com and http://example.com</p>\n</div>'  # no linkify
    )


def test_links_keep_no_referrer_and_show_where_they_point() -> None:
    out = to_html(f"[official docs]({X}/phish)")
    assert (
        f'<a href="{X}/phish" target="_blank" rel="noopener noreferrer nofollow" referrerpolicy="no-referrer">' in out
    )
    assert f'official docs</a> <span class="br-href">({X}/phish)</span>' in out
    assert "href" not in to_html("[x](javascript:alert(1))") and "href" not in to_html("[x](/relative)")


def test_images_become_placeholders() -> None:
    assert to_html(f"![a chart]({X}/c.png)") == (
        f'<div class="br-md"><p><span class="br-image">[image not loaded: a chart] ({X}/c.png)</span></p>\n</div>'
    )


def test_raw_text_is_every_character() -> None:
    assert raw_html("\n<b>x</b>\n\n") == '<pre class="br-raw">\n&lt;b&gt;x&lt;/b&gt;\n\n</pre>'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Please answer: correctness", "Please answer: correctness"),
        ("can't judge.", "can't judge."),
        (f"![p]({X}/a.png)", f"!\\[p\\](http:{WORD_JOINER}//outside.invalid/a.png)"),
        ("$5 and $10", "\\$5 and \\$10"),
        (
            ":red[x] :material/home: :smile:",
            f":{WORD_JOINER}red\\[x\\] :{WORD_JOINER}material/home: :{WORD_JOINER}smile:",
        ),
        ("<b>&amp;</b>", "\\<b\\>\\&amp;\\</b\\>"),
        ("a\nb", "a b"),
    ],
)
def test_markdown_literal(text: str, expected: str) -> None:
    assert markdown_literal(text) == expected


def test_entities_are_shown_as_written_so_no_name_hides_from_the_leak_scan() -> None:
    html = to_html("I am &#67;laude, Cl&#x61;ude and &amp; more")
    assert "Claude" not in html
    assert "&amp;#67;laude" in html and "&amp;amp;" in html  # the characters the model wrote, escaped
