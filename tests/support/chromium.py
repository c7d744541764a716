"""How every browser test, benchmark and screenshot script starts Chromium: Debian's, never a downloaded one,
with the background services off (this machine's network refuses them)."""

from __future__ import annotations

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
