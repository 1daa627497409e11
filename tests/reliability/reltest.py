# SPDX-License-Identifier: MIT
# reltest.py: the checks the reliability drivers share on output that must be safe to show: no
# control byte a terminal could act on, and JSON that is valid UTF-8. Each takes the driver's
# probetest.Test and counts its checks there.
import json


def no_controls(t, what, data):
    """data (bytes) has no C0 control but newlines, no DEL, is valid UTF-8 and has no C1 control."""
    t.eq(f"{what}: no control bytes but newlines", [],
         sorted({c for c in data if (c < 0x20 and c != 0x0a) or c == 0x7f}))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as ex:
        t.fail(f"{what}: not valid UTF-8 ({ex})")
        return
    t.eq(f"{what}: no C1 controls", [],
         sorted({hex(ord(c)) for c in text if 0x80 <= ord(c) < 0xa0}))


def valid_json(t, what, data):
    """The JSON document in data (bytes); None, after a failure, when it is not valid UTF-8 JSON."""
    try:
        return json.loads(data.decode("utf-8", errors="strict"))
    except (UnicodeDecodeError, ValueError) as ex:
        t.fail(f"{what}: not valid UTF-8 JSON ({ex})")
        return None
